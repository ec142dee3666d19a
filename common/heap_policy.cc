#include "common/heap_policy.h"

#include <malloc.h>

#include <cstdlib>

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

}  // namespace tfd
