// KeepHeapForSteps (common/heap_policy.h): what a step freed at the top of
// the heap, the next step reuses without faulting its pages in again. This
// test binary runs alone in its process, with glibc's limits as they start,
// so without the policy the second round below faults (checked when the
// policy was written: about forty faults a round, two hundred in all).
#include "common/heap_policy.h"

#include <catch2/catch.hpp>
#include <sys/resource.h>

#include <cstdlib>
#include <cstring>
#include <vector>

namespace tfd {
namespace {

long MinorFaults() {
  rusage usage{};
  REQUIRE(getrusage(RUSAGE_THREAD, &usage) == 0);
  return usage.ru_minflt;
}

// One "step": blocks below glibc's starting mmap threshold, written, then
// freed last-first, so the top of the heap ends up free.
void Step(size_t blocks, size_t bytes) {
  std::vector<void*> taken;
  for (size_t i = 0; i < blocks; ++i) {
    void* p = std::malloc(bytes);
    REQUIRE(p != nullptr);
    std::memset(p, 1, bytes);
    taken.push_back(p);
  }
  for (auto it = taken.rbegin(); it != taken.rend(); ++it) std::free(*it);
}

TEST_CASE("with the policy, a step's freed heap is reused by the next without page faults") {
  KeepHeapForSteps();
  constexpr size_t kBlocks = 8, kBytes = 100 << 10;  // 800 KiB a step, 200 pages
  Step(kBlocks, kBytes);  // the first step faults its pages in
  const long before = MinorFaults();
  for (int step = 0; step < 5; ++step) Step(kBlocks, kBytes);
  // A few faults of Catch2's own are allowed; trimming cost about 40 a step.
  CHECK(MinorFaults() - before < 20);
}

TEST_CASE("after FaultInHeap, the heap's next blocks are written without page faults") {
  KeepHeapForSteps();
  // Larger than anything this process took before, so the heap grows into
  // fresh pages: written without FaultInHeap, 16 MiB is 4,096 faults.
  constexpr size_t kBytes = 16 << 20;
  REQUIRE(FaultInHeap(kBytes));
  const long before = MinorFaults();
  void* block = std::malloc(kBytes - (64 << 10));
  REQUIRE(block != nullptr);
  std::memset(block, 1, kBytes - (64 << 10));
  const long faults = MinorFaults() - before;
  std::free(block);
  CHECK(faults < 20);
}

TEST_CASE("limits the user set in GLIBC_TUNABLES are recognised, and only those") {
  CHECK(TunablesSetHeapLimits("glibc.malloc.trim_threshold=1048576"));
  CHECK(TunablesSetHeapLimits("glibc.malloc.arena_max=2:glibc.malloc.mmap_threshold=65536"));
  CHECK_FALSE(TunablesSetHeapLimits(""));
  CHECK_FALSE(TunablesSetHeapLimits("glibc.malloc.arena_max=2"));
  CHECK_FALSE(TunablesSetHeapLimits("glibc.malloc.trim_threshold"));  // no value
  CHECK_FALSE(TunablesSetHeapLimits("xglibc.malloc.trim_threshold=1"));
}

}  // namespace
}  // namespace tfd
