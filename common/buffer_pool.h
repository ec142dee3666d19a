// BufferPool: large tensor buffers reused across steps.
//
// A fresh multi-megabyte buffer costs a page fault per 4 KiB page the first
// time it is written (131,072 of them for 512 MiB), which is more than the
// copy into it. The pool keeps the buffers of finished tensors and hands
// them out again, so a steady stream of transfers of the same sizes touches
// no new pages. Buffers are sized in powers of two from kMinBytes; ones of
// 2 MiB and more are asked to be backed by transparent huge pages. A hook
// sees each block when it is created and destroyed, once per block: a GPU
// task page-locks the host pool's blocks there (SetBlockHooks), so what
// crosses the data plane is copied to and from the device at the bus's
// speed.
//
//   BufferPool pool({.max_cached_bytes = 1 << 30});
//   TFD_ASSIGN_OR_RETURN(std::shared_ptr<Buffer> b, pool.Get(n));   // >= n bytes
//   ... a Tensor views b; when the last one lets go, b's block is cached ...
//
// Thread-safety: every method may be called from any thread; a buffer may
// be released on any thread. The pool's state lives as long as the pool or
// its last outstanding buffer, whichever is later.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

#include "common/buffer.h"
#include "common/status.h"

namespace tfd {

class BufferPool {
 public:
  static constexpr size_t kMinBytes = size_t{64} << 10;

  struct Options {
    // What the pool keeps of released blocks. A released block that does
    // not fit pushes out cached blocks (largest first); one larger than
    // this is unmapped at once.
    size_t max_cached_bytes = size_t{1} << 30;
    // Called once per block after it is mapped, and once before it is
    // unmapped, with its address and size (never with the pool's lock held
    // by another thread's call into the hook).
    std::function<void(void* data, size_t size)> on_map;
    std::function<void(void* data, size_t size)> on_unmap;
  };

  struct Stats {
    size_t blocks_mapped = 0;     // ever
    size_t bytes_in_use = 0;      // by outstanding buffers
    size_t bytes_cached = 0;      // kept for reuse
    size_t gets = 0, reused = 0;  // Get calls, and those served from the cache
  };

  explicit BufferPool(Options options);
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // A buffer of at least `bytes` bytes (its size() is `bytes`), not zeroed.
  // RESOURCE_EXHAUSTED when the memory cannot be mapped.
  StatusOr<std::shared_ptr<Buffer>> Get(size_t bytes);

  // Replaces the hooks, and calls the new `on_map` at once for every block
  // mapped now (in use or cached), so hooks installed after the first
  // buffers still see every block exactly once. Mapping and unmapping wait
  // while it runs.
  void SetBlockHooks(std::function<void(void* data, size_t size)> on_map,
                     std::function<void(void* data, size_t size)> on_unmap);

  Stats stats() const;
  // The block size a request of `bytes` gets.
  static size_t BlockSize(size_t bytes);

 private:
  struct State;
  std::shared_ptr<State> state_;
};

// The pool behind host tensors of BufferPool::kMinBytes and more
// (Buffer::Allocate): a step's activations and gradients come back at the
// same sizes every step, and a fresh block for each would fault its pages in
// again (about 1,800 faults a step for the 784-2048-2048-10 model). Keeps up
// to 1 GiB of released blocks.
BufferPool& HostBufferPool();

}  // namespace tfd
