#include "bench/cpu_split.h"

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
  // SplitCpus hands out `allowed` from its front, so what is left starts
  // after the last set.
  size_t used = 0;
  for (const std::vector<int>& set : sets) used += set.size();
  split.client_shares = used == allowed.size();
  split.client = split.client_shares ? split.workers[0] : std::vector<int>{allowed[used]};
  return split;
}

}  // namespace tfd::bench
