// libFuzzer target: any bytes as a CIFAR binary file (read by CifarDataset on
// a worker). The first byte picks 1 or 2 label bytes; parsing must end in
// records or an error status, and a failed parse must leave the records it
// was appending to as they were.
//
//   ./build-fuzz/tests/fuzz/cifar_fuzz -max_total_time=60 tests/fuzz/corpus/cifar_fuzz
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "kernels/data/cifar_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  const int64_t label_bytes = (data[0] & 1) + 1;
  tfd::kernels::data::CifarRecords records;
  const auto status = tfd::kernels::data::ParseCifarRecords(bytes, label_bytes, "fuzz", &records);
  const auto n = static_cast<size_t>(records.count);
  const bool consistent = records.labels.size() == n &&
                          records.pixels.size() == n * tfd::kernels::data::kCifarImageBytes;
  if (!consistent || (!status.ok() && n != 0)) std::abort();
  return 0;
}
