// Buffer: the refcounted, 64-byte-aligned memory behind tensors.
//
// Tensors share a Buffer through std::shared_ptr; slicing or reshaping a
// tensor shares it too, so a view never copies. A Buffer either owns its
// memory (Allocate) or borrows memory kept alive by an owner object (Wrap),
// which is how a tensor aliases the bytes of a received Cap'n Proto message.
// String tensors own an array of std::string objects constructed in place.
// Other tensors of BufferPool::kMinBytes (64 KiB) and more take a block of
// HostBufferPool(), which gets it back when the buffer goes.
// A buffer allocated with a MemoryBudget is charged to it before the memory
// is taken and credited when the buffer is destroyed. A buffer of device
// memory (common/device_memory.h) says which device holds it; host code
// never touches its bytes.
//
// Thread-safety: the refcount is atomic; the bytes are not synchronised.
#pragma once

#include <cstddef>
#include <memory>

#include "common/device_memory.h"
#include "common/dtype.h"
#include "common/memory_budget.h"
#include "common/status.h"

namespace tfd {

inline constexpr size_t kTensorAlignment = 64;
// A single allocation larger than this is refused rather than attempted.
inline constexpr size_t kMaxBufferBytes = size_t{16} << 30;

// How a new host buffer starts. kNone is for a writer that sets every byte
// before anything reads it (a product, a batch of copied pixels): the bytes
// are whatever the memory held, possibly another tensor's, so nothing that
// may leave an element unwritten uses it. Strings are constructed either way.
enum class Fill { kZeros, kNone };

class Buffer {
 public:
  // Room for `n` elements of `dtype`, zero-filled unless `fill` says
  // otherwise (strings: empty strings). With a `budget`, RESOURCE_EXHAUSTED
  // (and nothing allocated) when the bytes do not fit in it.
  static StatusOr<std::shared_ptr<Buffer>> Allocate(DType dtype, int64_t n,
                                                    std::shared_ptr<MemoryBudget> budget = nullptr,
                                                    Fill fill = Fill::kZeros);
  // Borrows `size` bytes at `data`, valid while `owner` is alive.
  static std::shared_ptr<Buffer> Wrap(void* data, size_t size, std::shared_ptr<void> owner);
  // Borrows `size` bytes of `device`'s memory at `data`, valid while `owner`
  // is alive (what a DeviceMemory's Allocate returns).
  static std::shared_ptr<Buffer> WrapDevice(void* data, size_t size, DeviceMemory* device,
                                            std::shared_ptr<void> owner);

  // Use Allocate or Wrap; the key keeps construction in this class.
  struct PrivateKey {};
  explicit Buffer(PrivateKey) {}
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  size_t size() const { return size_; }
  // The budget this buffer is charged to; null for none.
  const std::shared_ptr<MemoryBudget>& budget() const { return budget_; }
  // The device whose memory this is; null for host memory.
  DeviceMemory* device() const { return device_; }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
  DType dtype_ = DType::kInvalid;  // kString when data_ holds std::string objects
  int64_t count_ = 0;
  bool owned_ = false;
  std::shared_ptr<void> owner_;
  std::shared_ptr<MemoryBudget> budget_;  // charged size_ bytes when set
  DeviceMemory* device_ = nullptr;        // outlives every buffer it made
};

}  // namespace tfd
