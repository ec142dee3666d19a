// libFuzzer target: any bytes as a NumPy .npy file (`tfctl run --feed
// x=@file.npy`). Parsing must end in a tensor or an error status; a header
// whose shape claims more than the file holds must not be allocated.
//
//   ./build-fuzz/tests/fuzz/npy_fuzz -max_total_time=60 tests/fuzz/corpus/npy_fuzz
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cli/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)tfd::cli::ParseNpy(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.npy");
  return 0;
}
