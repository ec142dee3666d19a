// The master's side of cluster checkpoints: one request fanned out to every
// task of the cluster through Peers, each answer gathered, with a deadline
// on every wait. MasterService's saveCheckpoint / restoreCheckpoint /
// listCheckpoints are these.
//
//   SaveClusterCheckpoint(env, std::nullopt, deadline)
//       .then([](std::vector<TaskCheckpoints> tasks) { ... });
//
// Every function fails (as a kj exception carrying a Status) when a task
// fails or misses the deadline — naming each such task — and with
// FAILED_PRECONDITION when no task of the cluster has a --checkpoint-dir.
// Tasks without one are answered for with an empty `directory`.
//
// Thread-safety: event-loop thread only; `env` must outlive the promises.
#pragma once

#include <kj/async.h>
#include <kj/time.h>

#include <optional>
#include <vector>

#include "daemon/checkpoint/checkpoint_info.h"
#include "daemon/distributed/task_env.h"

namespace tfd {

// The variable whose value names a checkpoint saved without an explicit step.
inline constexpr const char* kGlobalStepVariable = "global_step";

// Saves on every task at `step`; without one, at the value of the integer
// scalar variable `global_step` on whichever task holds it initialized, else 0.
kj::Promise<std::vector<TaskCheckpoints>> SaveClusterCheckpoint(TaskEnv& env,
                                                                std::optional<int64_t> step,
                                                                kj::TimePoint deadline);

// Restores `step` on every task with a checkpoint dir; with step -1 the newest
// step that verifies on all of them (newer files passed over are listed in
// each task's `skipped` and logged), so that the tasks agree on one step.
kj::Promise<std::vector<TaskCheckpoints>> RestoreClusterCheckpoint(TaskEnv& env, int64_t step,
                                                                   kj::TimePoint deadline);

// Every task's checkpoints, oldest first, each file verified when `verify`.
kj::Promise<std::vector<TaskCheckpoints>> ListClusterCheckpoints(TaskEnv& env,
                                                                 kj::TimePoint deadline,
                                                                 bool verify);

}  // namespace tfd
