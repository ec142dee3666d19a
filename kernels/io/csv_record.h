// One CSV record split into fields and a field parsed as a column's type:
// what DecodeCSV (parsing_ops.cc) is made of, apart so that it can be
// fuzzed (tests/fuzz/csv_fuzz.cc).
//
//   TFD_ASSIGN_OR_RETURN(auto fields, SplitCsvRecord("1,\"a,b\"", ',', true, 0));
//   int32_t v;
//   bool ok = ParseCsvField(fields[0], &v);
//
// Thread-safety: free functions on values.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "common/status.h"

namespace tfd::kernels::io {

// The fields of `line`, quotes removed when `quotes` (a quoted field may hold
// `delim`, a quote written twice); INVALID_ARGUMENT naming `record` for an
// unclosed quote or one closed before the field ends.
StatusOr<std::vector<std::string>> SplitCsvRecord(const std::string& line, char delim, bool quotes,
                                                  int64_t record);

// `text` (surrounding spaces allowed) as a T, or false.
template <typename T>
inline bool ParseNumber(std::string text, T* out) {
  const size_t b = text.find_first_not_of(" \t"), e = text.find_last_not_of(" \t");
  if (b == std::string::npos) return false;
  text = text.substr(b, e - b + 1);
  char* end = nullptr;
  errno = 0;
  if constexpr (std::is_floating_point_v<T>) {
    *out = std::is_same_v<T, float> ? std::strtof(text.c_str(), &end)
                                    : std::strtod(text.c_str(), &end);
  } else {
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (errno == ERANGE || v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) {
      return false;
    }
    *out = static_cast<T>(v);
  }
  return end == text.c_str() + text.size();
}

// A CSV field into `slot`: false when it is not a T.
template <typename T>
inline bool ParseCsvField(const std::string& text, T* slot) {
  if constexpr (std::is_same_v<T, std::string>) {
    *slot = text;
    return true;
  } else if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, uint8_t>) {
    return false;  // not a column type
  } else {
    return ParseNumber(text, slot);
  }
}

}  // namespace tfd::kernels::io
