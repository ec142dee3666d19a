#include "common/memory_budget.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "common/size_limits.h"

namespace tfd {
namespace {

// The cgroup (v2, then v1) memory limit of this process; 0 when there is
// none or it cannot be read. v2's "max" and v1's huge sentinel mean none.
uint64_t CgroupLimit() {
  for (const char* path : {"/sys/fs/cgroup/memory.max",
                           "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream in(path);
    std::string text;
    if (!(in >> text) || text == "max") continue;
    try {
      return std::stoull(text);
    } catch (...) {
      continue;
    }
  }
  return 0;
}

}  // namespace

uint64_t MemoryBudget::DefaultLimit() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGE_SIZE);
  uint64_t memory = pages > 0 && page_size > 0
                        ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size)
                        : uint64_t{4} << 30;  // unknown: assume a small machine
  if (const uint64_t cgroup = CgroupLimit(); cgroup > 0) memory = std::min(memory, cgroup);
  return memory / 4 * 3;
}

Status MemoryBudget::Charge(uint64_t bytes) {
  uint64_t used = used_.load(std::memory_order_relaxed);
  do {
    if (bytes > limit_ || used > limit_ - bytes) {
      return errors::ResourceExhausted(FormatBytes(bytes), " more would pass the task's memory "
                                       "budget: ", FormatBytes(used), " of ",
                                       FormatBytes(limit_), " in use (--memory-budget)");
    }
  } while (!used_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed));
  return OkStatus();
}

void MemoryBudget::Release(uint64_t bytes) { used_.fetch_sub(bytes, std::memory_order_relaxed); }

}  // namespace tfd
