// libFuzzer target: any bytes as an IDX file (MNIST's format, read by the
// input ops on a worker). The first byte picks images or labels; parsing
// must end in data or an error status, and a header whose dimensions claim
// more than the file holds must not be allocated.
//
//   ./build-fuzz/tests/fuzz/idx_fuzz -max_total_time=60 tests/fuzz/corpus/idx_fuzz
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kernels/data/idx_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1) {
    (void)tfd::kernels::data::ParseIdxImages(bytes, "fuzz-images");
  } else {
    (void)tfd::kernels::data::ParseIdxLabels(bytes, "fuzz-labels");
  }
  return 0;
}
