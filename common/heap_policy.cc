#include "common/heap_policy.h"

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

// The kernel's value (Linux 5.14); older C library headers lack the name.
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

namespace tfd {
namespace {

// glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit targets, the largest
// threshold mallopt accepts; its adjustment sets the trim limit to twice it.
constexpr int kMmapThreshold = 32 << 20;
constexpr int kTrimThreshold = 2 * kMmapThreshold;

}  // namespace

bool TunablesSetHeapLimits(std::string_view glibc_tunables) {
  for (std::string_view name : {"glibc.malloc.trim_threshold", "glibc.malloc.mmap_threshold"}) {
    for (size_t at = glibc_tunables.find(name); at != std::string_view::npos;
         at = glibc_tunables.find(name, at + 1)) {
      // A whole name: at the start or after ':', and followed by '='.
      const bool starts = at == 0 || glibc_tunables[at - 1] == ':';
      const size_t end = at + name.size();
      if (starts && end < glibc_tunables.size() && glibc_tunables[end] == '=') return true;
    }
  }
  return false;
}

void KeepHeapForSteps() {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables != nullptr && TunablesSetHeapLimits(tunables)) return;
  // Setting either turns glibc's own adjustment off, so both are set.
  (void)mallopt(M_MMAP_THRESHOLD, kMmapThreshold);
  (void)mallopt(M_TRIM_THRESHOLD, kTrimThreshold);
}

bool FaultInHeap(size_t bytes) {
  void* block = std::malloc(bytes);
  if (block == nullptr) return false;
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(block) + page - 1) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(block) + bytes) & ~(page - 1);
  const bool populated =
      end > begin && madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE) == 0;
  std::free(block);  // back to the top of the heap, where the next blocks come from
  return populated;
}

}  // namespace tfd
