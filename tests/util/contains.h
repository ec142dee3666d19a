// Whether a message holds a phrase: what tests assert of error messages
// where Catch's matchers are not at hand.
#pragma once

#include <string>

namespace tfd::testing {

inline bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace tfd::testing
