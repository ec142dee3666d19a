// libFuzzer target: any bytes as lines of a Criteo TSV file (read by the
// CriteoDataset input op on a worker). The first byte picks the table size;
// every line must parse into an example whose rows lie in the table (or are
// -1 for an empty field), or end in an error status.
//
//   ./build-fuzz/tests/fuzz/criteo_fuzz -max_total_time=60 tests/fuzz/corpus/criteo_fuzz
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "kernels/data/criteo_line.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const int64_t buckets = int64_t{1} + data[0] * 4099;
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  tfd::kernels::data::CriteoExample ex;
  while (!rest.empty()) {
    const size_t nl = rest.find('\n');
    const std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    if (!tfd::kernels::data::ParseCriteoLine(line, buckets, ex).ok()) continue;
    for (const int64_t id : ex.ids) {
      if (id < -1 || id >= buckets) std::abort();  // a row outside the table
    }
  }
  return 0;
}
