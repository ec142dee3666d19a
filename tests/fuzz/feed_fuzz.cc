// libFuzzer target: any text as a --feed argument (NAME=VALUE, the value a
// tensor literal such as [[1, 2], [3, 4]]). The first byte picks the dtype
// the fed node declares (or none); splitting and parsing must end in a
// tensor or an error status, whatever the nesting or the numbers' sizes.
//
//   ./build-fuzz/tests/fuzz/feed_fuzz -max_total_time=60 tests/fuzz/corpus/feed_fuzz
#include <cstddef>
#include <cstdint>
#include <string>

#include "cli/feed_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const auto declared = static_cast<tfd::DType>(data[0] % tfd::kNumDTypes);
  const std::string arg(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto feed = tfd::cli::SplitFeed(arg);
  if (feed.ok() && !feed->from_file) (void)tfd::cli::ParseFeedValue(feed->value, declared);
  (void)tfd::cli::ParseFeedValue(arg, declared);
  return 0;
}
