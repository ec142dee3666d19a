// The receive pool of the data plane: blocks reused across steps (so a
// steady stream of transfers maps nothing new), the cache bounded, the block
// just released kept in preference to others, and the map/unmap hooks (UCX
// registration) called once per block.
#include "common/buffer_pool.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <map>
#include <thread>

namespace tfd {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

TEST_CASE("a released block serves the next request of its size without a new mapping") {
  BufferPool pool({});
  void* first = nullptr;
  for (int step = 0; step < 5; ++step) {
    auto b = pool.Get(3 * kMiB + 5);
    REQUIRE(b.ok());
    CHECK((*b)->size() == 3 * kMiB + 5);
    std::memset((*b)->data(), step, (*b)->size());  // the memory is usable
    if (step == 0) first = (*b)->data();
    CHECK((*b)->data() == first);
    CHECK(pool.stats().bytes_in_use == BufferPool::BlockSize(3 * kMiB + 5));
  }
  const auto s = pool.stats();
  CHECK(s.blocks_mapped == 1);
  CHECK(s.gets == 5);
  CHECK(s.reused == 4);
  CHECK(s.bytes_in_use == 0);
  CHECK(s.bytes_cached == 4 * kMiB);
}

TEST_CASE("the cache keeps at most its bound, preferring the block just released") {
  std::map<void*, int> maps, unmaps;
  BufferPool pool({.max_cached_bytes = 8 * kMiB,
                   .on_map = [&](void* p, size_t) { ++maps[p]; },
                   .on_unmap = [&](void* p, size_t) { ++unmaps[p]; }});
  // 4 + 2 MiB cached.
  {
    auto a = pool.Get(4 * kMiB);
    auto b = pool.Get(2 * kMiB);
    REQUIRE((a.ok() && b.ok()));
  }
  CHECK(pool.stats().bytes_cached == 6 * kMiB);
  // An 8 MiB block released: the others make room, it stays.
  void* big = nullptr;
  {
    auto c = pool.Get(8 * kMiB);
    REQUIRE(c.ok());
    big = (*c)->data();
  }
  CHECK(pool.stats().bytes_cached == 8 * kMiB);
  CHECK(pool.stats().blocks_mapped == 3);
  {
    auto again = pool.Get(8 * kMiB);
    REQUIRE(again.ok());
    CHECK((*again)->data() == big);  // reused: no new mapping, no fault
  }
  CHECK(pool.stats().blocks_mapped == 3);
  // A block larger than the whole cache is unmapped as soon as it is free.
  {
    auto huge = pool.Get(16 * kMiB);
    REQUIRE(huge.ok());
  }
  CHECK(pool.stats().bytes_cached == 8 * kMiB);
  CHECK(pool.stats().bytes_in_use == 0);
  // Each block mapped once, and each one unmapped (so far) once.
  for (auto [p, n] : maps) CHECK(n == 1);
  for (auto [p, n] : unmaps) {
    CHECK(n == 1);
    CHECK(maps.count(p) == 1);
  }
  CHECK(unmaps.size() == 3);  // 4 MiB, 2 MiB, 16 MiB
}

TEST_CASE("buffers outlive the pool and may be released on another thread") {
  std::shared_ptr<Buffer> kept;
  {
    BufferPool pool({});
    auto b = pool.Get(kMiB);
    REQUIRE(b.ok());
    kept = *b;
  }
  std::memset(kept->data(), 7, kept->size());
  std::thread([b = std::move(kept)]() mutable { b.reset(); }).join();
}

// A GPU task page-locks the host pool's blocks once the device is found,
// after the first tensors exist: each block must be shown to the hook
// exactly once (a block registered twice, or freed while registered, is an
// error from the driver).
TEST_CASE("hooks set late see every block once: those in use, those cached, and new ones") {
  BufferPool pool({.max_cached_bytes = 4 * kMiB});
  auto in_use = pool.Get(kMiB);
  REQUIRE(in_use.ok());
  { REQUIRE(pool.Get(2 * kMiB).ok()); }  // cached
  std::map<void*, int> maps, unmaps;
  pool.SetBlockHooks([&](void* p, size_t) { ++maps[p]; }, [&](void* p, size_t) { ++unmaps[p]; });
  CHECK(maps.size() == 2);
  CHECK(maps.count((*in_use)->data()) == 1);
  {
    auto fresh = pool.Get(8 * kMiB);  // new; larger than the cache: unmapped when released
    REQUIRE(fresh.ok());
    CHECK(maps.count((*fresh)->data()) == 1);
    CHECK(maps.size() == 3);
  }
  CHECK(unmaps.size() == 1);
  { REQUIRE(pool.Get(2 * kMiB).ok()); }  // the cached block again: not shown twice
  for (auto [p, n] : maps) CHECK(n == 1);
  pool.SetBlockHooks(nullptr, nullptr);
  in_use->reset();
  CHECK(unmaps.size() == 1);  // hooks removed: nothing more is shown
}

TEST_CASE("an impossible size is RESOURCE_EXHAUSTED, not a crash") {
  BufferPool pool({});
  auto b = pool.Get(size_t{1} << 63);
  CHECK(b.status().code() == Code::kResourceExhausted);
  auto mapped_too_much = pool.Get(size_t{1} << 50);  // 1 PiB: mmap refuses it
  CHECK(mapped_too_much.status().code() == Code::kResourceExhausted);
}

}  // namespace
}  // namespace tfd
