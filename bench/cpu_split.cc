#include "bench/cpu_split.h"

namespace tfd::bench {

StatusOr<CpuSplit> SplitCpus(const std::vector<int>& allowed, int ps_tasks, int workers,
                             int cpus_per_task) {
  const int tasks = ps_tasks + workers;
  if (tasks < 1 || workers < 1 || ps_tasks < 0) {
    return errors::InvalidArgument("a placement needs a worker, got ", ps_tasks, " ps and ",
                                   workers, " worker tasks");
  }
  const int allowed_count = static_cast<int>(allowed.size());
  const int per_task = cpus_per_task == kEvenCpus ? allowed_count / tasks : cpus_per_task;
  if (per_task < 1 || per_task * tasks > allowed_count) {
    const int asked = cpus_per_task == kEvenCpus ? 1 : cpus_per_task;
    return errors::InvalidArgument(
        "--cpus-per-task ", cpus_per_task == kEvenCpus ? "even" : std::to_string(asked),
        " needs ", asked * tasks, " CPUs for ", ps_tasks, " ps + ", workers,
        " worker tasks, and ", allowed_count, " are allowed");
  }
  CpuSplit split;
  auto next = allowed.begin();
  auto take = [&next, per_task] {
    std::vector<int> set(next, next + per_task);
    next += per_task;
    return set;
  };
  for (int t = 0; t < ps_tasks; ++t) split.ps.push_back(take());
  for (int t = 0; t < workers; ++t) split.workers.push_back(take());
  split.client_shares = next == allowed.end();
  split.client = split.client_shares ? split.workers[0] : std::vector<int>{*next};
  return split;
}

std::string CpuListString(const std::vector<int>& cpus) {
  if (cpus.empty()) return "none";
  std::string s;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!s.empty()) s += ",";
    s += std::to_string(cpus[i]);
    if (j > i) s += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return s;
}

}  // namespace tfd::bench
