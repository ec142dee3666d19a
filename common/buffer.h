// Buffer: the refcounted, 64-byte-aligned memory behind tensors.
//
// Tensors share a Buffer through std::shared_ptr; slicing or reshaping a
// tensor shares it too, so a view never copies. A Buffer either owns its
// memory (Allocate) or borrows memory kept alive by an owner object (Wrap),
// which is how a tensor aliases the bytes of a received Cap'n Proto message.
// String tensors own an array of std::string objects constructed in place.
//
// Thread-safety: the refcount is atomic; the bytes are not synchronised.
#pragma once

#include <cstddef>
#include <memory>

#include "common/dtype.h"
#include "common/status.h"

namespace tfd {

inline constexpr size_t kTensorAlignment = 64;
// A single allocation larger than this is refused rather than attempted.
inline constexpr size_t kMaxBufferBytes = size_t{16} << 30;

class Buffer {
 public:
  // Zero-initialised room for `n` elements of `dtype` (strings: empty strings).
  static StatusOr<std::shared_ptr<Buffer>> Allocate(DType dtype, int64_t n);
  // Borrows `size` bytes at `data`, valid while `owner` is alive.
  static std::shared_ptr<Buffer> Wrap(void* data, size_t size, std::shared_ptr<void> owner);

  // Use Allocate or Wrap; the key keeps construction in this class.
  struct PrivateKey {};
  explicit Buffer(PrivateKey) {}
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
  DType dtype_ = DType::kInvalid;  // kString when data_ holds std::string objects
  int64_t count_ = 0;
  bool owned_ = false;
  std::shared_ptr<void> owner_;
};

}  // namespace tfd
