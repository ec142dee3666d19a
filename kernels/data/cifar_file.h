// CIFAR-10 and CIFAR-100 binary files (data_batch_1.bin ... test_batch.bin):
// fixed-size records with no header, each `label_bytes` label bytes (1 for
// CIFAR-10; 2 for CIFAR-100, coarse then fine) followed by a 32x32 image as
// three planes of 1024 bytes, red, green, blue, each row-major.
//
// Records are decoded into one buffer of images in NHWC order (the layout
// Conv2D takes), so a batch is a copy and a scale, not a transpose. The
// file's size is checked to be a whole number of records before anything is
// allocated, and every label is checked against its range.
//
//   CifarRecords r;
//   TFD_RETURN_IF_ERROR(ReadCifarFile(resolved, "data_batch_1.bin", 1, &r));
//   const uint8_t* first = r.pixels.data();        // kCifarImageBytes, HWC
//
// Errors are INVALID_ARGUMENT (a malformed file: naming the file, and the
// offset or record concerned) or NOT_FOUND (no file).
// Thread-safety: free functions on values.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tfd::kernels::data {

inline constexpr int64_t kCifarSide = 32;
inline constexpr int64_t kCifarChannels = 3;
inline constexpr int64_t kCifarImageBytes = kCifarSide * kCifarSide * kCifarChannels;  // 3072

// Decoded records, possibly of several files, in file order.
struct CifarRecords {
  int64_t count = 0;
  std::vector<uint8_t> pixels;  // count * kCifarImageBytes, each image HWC
  std::vector<uint8_t> labels;  // count; the fine label for CIFAR-100
};

// Classes a label may name: 10 with one label byte, 100 with two.
int64_t CifarNumClasses(int64_t label_bytes);

// Appends the records of `bytes` (a whole file) to `out`; `display_name`
// is how messages name the file. label_bytes must be 1 or 2. On an error
// `out` is left as it was.
Status ParseCifarRecords(std::string_view bytes, int64_t label_bytes,
                         const std::string& display_name, CifarRecords* out);

// Reads the file at `path` (already resolved against the task's allowed
// directories) and appends its records to `out`.
Status ReadCifarFile(const std::filesystem::path& path, const std::string& display_name,
                     int64_t label_bytes, CifarRecords* out);

}  // namespace tfd::kernels::data
