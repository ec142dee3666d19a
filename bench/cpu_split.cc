#include "bench/cpu_split.h"

#include <algorithm>
#include <string>

#include "common/cpu_split.h"

namespace tfd::bench {

StatusOr<CpuSplit> SplitCpusByRole(const std::vector<int>& allowed, int ps_tasks, int workers,
                                   int cpus_per_task) {
  if (workers < 1 || ps_tasks < 0) {
    return errors::InvalidArgument("a placement needs a worker, got ", ps_tasks, " ps and ",
                                   workers, " worker tasks");
  }
  const std::string per_task =
      cpus_per_task == kEvenCpus ? "even" : std::to_string(cpus_per_task);
  TFD_ASSIGN_OR_RETURN(auto sets, SplitCpus(per_task, allowed, ps_tasks + workers));
  CpuSplit split;
  split.ps.assign(sets.begin(), sets.begin() + ps_tasks);
  split.workers.assign(sets.begin() + ps_tasks, sets.end());
  std::vector<int> left;
  for (int cpu : allowed) {
    const bool used = std::any_of(sets.begin(), sets.end(), [cpu](const std::vector<int>& set) {
      return std::find(set.begin(), set.end(), cpu) != set.end();
    });
    if (!used) left.push_back(cpu);
  }
  split.client_shares = left.empty();
  split.client = split.client_shares ? split.workers[0] : std::vector<int>{left.front()};
  return split;
}

}  // namespace tfd::bench
