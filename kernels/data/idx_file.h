// IDX files, the format MNIST and Fashion-MNIST ship in: a big-endian header
// (two zero bytes, a type code, the number of dimensions, then one uint32
// per dimension) followed by the elements in row-major order.
//
// Only the two layouts MNIST uses are read: uint8 images [n, rows, cols]
// (magic 0x00000803) and uint8 labels [n] (magic 0x00000801). Files are raw,
// not gzipped. A reader checks the header against the file's size before it
// allocates anything, so a hostile header cannot make it reserve memory the
// file does not back.
//
//   TFD_ASSIGN_OR_RETURN(IdxImages im, ReadIdxImages(resolved, "train-images-idx3-ubyte"));
//   const uint8_t* first = im.pixels.data();          // rows * cols bytes
//
// Errors are INVALID_ARGUMENT (a malformed file) or NOT_FOUND (no file) and
// name the file as `display_name` and what is wrong with it.
// Thread-safety: free functions on values.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tfd::kernels::data {

inline constexpr uint32_t kIdxImagesMagic = 0x00000803;  // uint8, 3 dimensions
inline constexpr uint32_t kIdxLabelsMagic = 0x00000801;  // uint8, 1 dimension

struct IdxImages {
  int64_t count = 0;
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<uint8_t> pixels;  // count * rows * cols, image after image
};

struct IdxLabels {
  std::vector<uint8_t> labels;  // one per example
};

// The file's bytes decoded; `display_name` is how messages name the file.
StatusOr<IdxImages> ParseIdxImages(std::string_view bytes, const std::string& display_name);
StatusOr<IdxLabels> ParseIdxLabels(std::string_view bytes, const std::string& display_name);

// Reads and parses the file at `path` (already resolved against the task's
// allowed directories).
StatusOr<IdxImages> ReadIdxImages(const std::filesystem::path& path,
                                  const std::string& display_name);
StatusOr<IdxLabels> ReadIdxLabels(const std::filesystem::path& path,
                                  const std::string& display_name);

}  // namespace tfd::kernels::data
