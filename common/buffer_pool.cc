#include "common/buffer_pool.h"

#include <sys/mman.h>

#include <bit>
#include <map>
#include <vector>

#include "common/mutex.h"

namespace tfd {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

void* MapBlock(size_t size) {
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  // Fewer faults and TLB misses for large transfers, where the kernel
  // allows it; a refusal changes nothing but speed.
  if (size >= kHugePage) (void)madvise(p, size, MADV_HUGEPAGE);
  return p;
}

}  // namespace

struct BufferPool::State {
  // Held around mapping a block and calling on_map, around on_unmap and
  // unmapping, and while SetBlockHooks runs, so a hook sees each block once
  // and no block is unmapped while a new hook is being shown it. Mapping
  // is rare (the cache serves steady steps), so this costs nothing there.
  // Taken before `mu`, never after.
  Mutex map_mu;
  std::map<void*, size_t> mapped GUARDED_BY(map_mu);  // every block, by address
  std::function<void(void*, size_t)> on_map GUARDED_BY(map_mu);
  std::function<void(void*, size_t)> on_unmap GUARDED_BY(map_mu);
  Options options;  // its max_cached_bytes is read and changed under `mu`
  mutable Mutex mu;
  std::map<size_t, std::vector<void*>> free GUARDED_BY(mu);  // by block size
  Stats stats GUARDED_BY(mu);

  // Takes back a block whose last buffer is gone: cached, or unmapped when
  // larger than the whole cache. The block just released is the likeliest
  // to be asked for again (the same tensor in the next step), so when the
  // cache is full, blocks of other sizes make room for it, largest first.
  void Release(void* data, size_t size) {
    std::vector<std::pair<void*, size_t>> evicted;
    {
      MutexLock lock(mu);
      stats.bytes_in_use -= size;
      if (size <= options.max_cached_bytes) {
        for (auto it = free.rbegin();
             stats.bytes_cached + size > options.max_cached_bytes && it != free.rend(); ++it) {
          auto& [block_size, blocks] = *it;
          while (!blocks.empty() && stats.bytes_cached + size > options.max_cached_bytes) {
            evicted.emplace_back(blocks.back(), block_size);
            blocks.pop_back();
            stats.bytes_cached -= block_size;
          }
        }
        free[size].push_back(data);
        stats.bytes_cached += size;
        data = nullptr;
      }
    }
    for (auto [block, block_size] : evicted) Unmap(block, block_size);
    if (data != nullptr) Unmap(data, size);
  }

  void Unmap(void* data, size_t size) {
    MutexLock lock(map_mu);
    if (on_unmap) on_unmap(data, size);
    munmap(data, size);
    mapped.erase(data);
  }

  // A new block of `size` bytes, shown to on_map; null when mmap fails.
  void* Map(size_t size) {
    MutexLock lock(map_mu);
    void* data = MapBlock(size);
    if (data == nullptr) return nullptr;
    mapped.emplace(data, size);
    if (on_map) on_map(data, size);
    return data;
  }
};

BufferPool::BufferPool(Options options) : state_(std::make_shared<State>()) {
  SetBlockHooks(std::move(options.on_map), std::move(options.on_unmap));
  state_->options = std::move(options);
}

BufferPool::~BufferPool() {
  // Outstanding buffers keep the state and return their blocks to it; what
  // is cached now goes.
  std::map<size_t, std::vector<void*>> cached;
  {
    MutexLock lock(state_->mu);
    cached.swap(state_->free);
    state_->stats.bytes_cached = 0;
    state_->options.max_cached_bytes = 0;
  }
  for (auto& [size, blocks] : cached) {
    for (void* b : blocks) state_->Unmap(b, size);
  }
}

size_t BufferPool::BlockSize(size_t bytes) {
  return bytes <= kMinBytes ? kMinBytes : std::bit_ceil(bytes);
}

StatusOr<std::shared_ptr<Buffer>> BufferPool::Get(size_t bytes) {
  if (bytes > (size_t{1} << 62)) {
    return errors::ResourceExhausted("a buffer of ", bytes, " bytes cannot be pooled");
  }
  const size_t size = BlockSize(bytes);
  void* data = nullptr;
  {
    MutexLock lock(state_->mu);
    ++state_->stats.gets;
    auto it = state_->free.find(size);
    if (it != state_->free.end() && !it->second.empty()) {
      data = it->second.back();
      it->second.pop_back();
      state_->stats.bytes_cached -= size;
      ++state_->stats.reused;
    }
    state_->stats.bytes_in_use += size;
  }
  if (data == nullptr) {
    data = state_->Map(size);
    if (data == nullptr) {
      MutexLock lock(state_->mu);
      state_->stats.bytes_in_use -= size;
      return errors::ResourceExhausted("cannot map ", size, " bytes for a tensor buffer");
    }
    MutexLock lock(state_->mu);
    ++state_->stats.blocks_mapped;
  }
  // The owner returns the block when the last view of the buffer is gone.
  std::shared_ptr<void> owner(data, [state = state_, size](void* p) { state->Release(p, size); });
  return Buffer::Wrap(data, bytes, std::move(owner));
}

void BufferPool::SetBlockHooks(std::function<void(void* data, size_t size)> on_map,
                               std::function<void(void* data, size_t size)> on_unmap) {
  MutexLock lock(state_->map_mu);
  state_->on_map = std::move(on_map);
  state_->on_unmap = std::move(on_unmap);
  if (!state_->on_map) return;
  for (const auto& [data, size] : state_->mapped) state_->on_map(data, size);
}

BufferPool& HostBufferPool() {
  // Buffers still out when it is destroyed at exit keep its state and
  // unmap their blocks when they go.
  static BufferPool pool(BufferPool::Options{});
  return pool;
}

BufferPool::Stats BufferPool::stats() const {
  MutexLock lock(state_->mu);
  return state_->stats;
}

}  // namespace tfd
