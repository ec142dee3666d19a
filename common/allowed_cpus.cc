#include "common/allowed_cpus.h"

#include <sched.h>

#include <algorithm>
#include <thread>

namespace tfd {

std::vector<int> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int i = 0; i < CPU_SETSIZE; ++i) {
    if (CPU_ISSET(i, &set)) cpus.push_back(i);
  }
  return cpus;
}

int NumAllowedCpus() {
  const size_t n = AllowedCpus().size();
  if (n > 0) return static_cast<int>(n);
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace tfd
