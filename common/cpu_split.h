// --cpus-per-task (tfctl start, train_bench): which of this process's
// allowed CPUs each task sharing the host gets, so that tasks do not share
// CPUs (and each tfd, which sizes its thread pool by its allowed CPUs, runs
// as many compute threads as it has CPUs).
//
//   auto sets = SplitCpus("2", AllowedCpus(), 3);  // {{0,1},{2,3},{4,5}} on 0-7
//
// Thread-safety: a pure function.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace tfd {

// One CPU set per task, for `tasks` tasks in the order they are started:
// task k gets the k-th run of `per_task` CPUs of `allowed` (in its order).
// `per_task` is a positive count, or "even" for allowed.size() / tasks each
// (the CPUs left over stay unused, so every task has as many). An empty
// `per_task` pins nothing: `tasks` empty sets. INVALID_ARGUMENT for a
// malformed `per_task`, or when `allowed` has too few CPUs, naming how many
// were needed and how many are allowed.
StatusOr<std::vector<std::vector<int>>> SplitCpus(const std::string& per_task,
                                                  const std::vector<int>& allowed, int tasks);

// "0-3", "0,2,5-7": the CPU list as /proc/PID/status writes it.
std::string FormatCpuList(const std::vector<int>& cpus);

}  // namespace tfd
