// How train_bench places the processes of one measurement on the CPUs it
// may use (--cpus-per-task): the tasks get disjoint runs of CPUs by
// common/cpu_split.h's rule, in the order ps:0, ps:1, ..., worker:0,
// worker:1, ..., and the client one CPU of its own when one is left over,
// else worker:0's set (it mostly waits for the worker's reply).
//
//   TFD_ASSIGN_OR_RETURN(CpuSplit split, SplitCpusByRole(AllowedCpus(), 1, 1, kEvenCpus));
//   // 16 CPUs: ps[0] = {0..7}, workers[0] = {8..15}, client = workers[0]
//
// Thread-safety: pure functions.
#pragma once

#include <vector>

#include "common/status.h"

namespace tfd::bench {

// --cpus-per-task even: the allowed CPUs split evenly over the tasks.
inline constexpr int kEvenCpus = -1;

struct CpuSplit {
  std::vector<std::vector<int>> ps;       // one set per ps task, in task order
  std::vector<std::vector<int>> workers;  // one set per worker task
  std::vector<int> client;                // its own CPU, or worker:0's set
  bool client_shares = false;             // client is worker:0's set
};

// `cpus_per_task` > 0, or kEvenCpus. INVALID_ARGUMENT saying how many CPUs
// were needed and how many are allowed when `allowed` has too few.
StatusOr<CpuSplit> SplitCpusByRole(const std::vector<int>& allowed, int ps_tasks, int workers,
                                   int cpus_per_task);

}  // namespace tfd::bench
