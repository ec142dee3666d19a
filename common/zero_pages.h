// ZeroPages: anonymous memory, zeroed and in memory when made, taken from the
// kernel in one system call.
//
// A large table zeroed by the allocator (std::vector<T>(n), or calloc from
// the heap) takes its pages one fault at a time as the zeroing reaches
// them; on the virtual machines tfd was measured on a fault costs 10-15 us,
// so a 1.7 MiB table cost a task 5 ms on its first step. A private
// anonymous mapping is zero by the kernel's guarantee, and MAP_POPULATE has
// the kernel fill in its pages at once: 0.4 ms for the same table
// (bench/NOTES.md, "How tfd and tfctl link"). Taken whole rather than page
// by page as it is used, so that the steps after the first fault no more.
//
//   ZeroPages pages(bytes);                      // throws std::bad_alloc
//   auto* slots = pages.As<int64_t>();           // all zero
//   pages.resident_bytes();                      // == pages.size() here
//
// Move-only; the mapping goes with the last owner. Thread-safety: as for
// the memory itself (the caller's).
#pragma once

#include <cstddef>

namespace tfd {

class ZeroPages {
 public:
  ZeroPages() = default;
  // Maps `bytes` (rounded up to whole pages) and has the kernel fill them
  // in (pages it cannot fill in now fault in later); std::bad_alloc when
  // the kernel refuses the mapping, as an allocation would.
  explicit ZeroPages(size_t bytes);
  ~ZeroPages();
  ZeroPages(ZeroPages&& other) noexcept;
  ZeroPages& operator=(ZeroPages&& other) noexcept;
  ZeroPages(const ZeroPages&) = delete;
  ZeroPages& operator=(const ZeroPages&) = delete;

  // The memory at `offset` bytes, as T; page-aligned at offset 0.
  template <typename T>
  T* As(size_t offset = 0) const {
    return reinterpret_cast<T*>(static_cast<char*>(data_) + offset);
  }
  size_t size() const { return size_; }
  // Bytes of the mapping in memory now (mincore), 0 where it cannot tell.
  size_t resident_bytes() const;

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace tfd
