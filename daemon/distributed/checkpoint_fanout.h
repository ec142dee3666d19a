// The master's side of cluster checkpoints: one request fanned out to every
// task of the cluster through Peers, each answer gathered, with a deadline
// on every wait. MasterService's saveCheckpoint / restoreCheckpoint /
// listCheckpoints are these; FinishCheckpointOnTask is the tasks' side of a
// save's later phases.
//
// A save is a two-phase commit, so that a step counts only once every
// task's part of it is written: every task writes its part as a pending
// file (which nothing restores); only when all have does each commit it (the
// file becomes the step's checkpoint); only when all have committed does
// each apply its retention, keeping that step. A part some task failed to
// write is discarded by the others; a commit some task did not answer OK
// is taken back by the others. So the newest step committed on every
// task — what a cluster restore takes — is never deleted by a save that
// failed, on any task, and a task restarting alone restores a step whose
// every part was written. (Why not one marker of the newest complete step:
// a save would still replace the files of a step in place before knowing
// whether every task could write its part, and a failure would leave files
// a restore could take for a complete step. docs/checkpoint_format.md.)
//
//   SaveClusterCheckpoint(env, std::nullopt, deadline)
//       .then([](std::vector<TaskCheckpoints> tasks) { ... });
//
// Every function fails (as a kj exception carrying a Status) when a task
// fails or misses the deadline — naming each such task — and with
// FAILED_PRECONDITION when no task of the cluster has a --checkpoint-dir.
// Tasks without one are answered for with an empty `directory`. A task that
// had nothing to save when this master last heard from it (no directory,
// or an empty part: a worker holding no variable) is not waited for past
// CheckpointParticipants::kOptionalPatience: if it does not answer (stopped,
// down, too slow), the save or restore goes on without it and answers for
// it with `left_out` saying why (daemon/distributed/checkpoint_participants.h).
// So a stopped worker holding nothing does not stop the cluster's
// checkpoints; a stopped task holding variables still fails them, named.
//
// Thread-safety: event-loop thread only; `env` must outlive the promises.
#pragma once

#include <kj/async.h>
#include <kj/time.h>

#include <optional>
#include <vector>

#include "daemon/checkpoint/checkpoint_info.h"
#include "daemon/checkpoint/checkpoint_manager.h"
#include "daemon/distributed/task_env.h"
#include "schemas/rpc.capnp.h"

namespace tfd {

// The variable whose value names a checkpoint saved without an explicit step.
inline constexpr const char* kGlobalStepVariable = "global_step";

// Saves on every task at `step`; without one, at the value of the integer
// scalar variable `global_step` on whichever task holds it initialized, else 0.
// Counted in env.metrics.cluster_checkpoints; a failure is also logged.
kj::Promise<std::vector<TaskCheckpoints>> SaveClusterCheckpoint(TaskEnv& env,
                                                                std::optional<int64_t> step,
                                                                kj::TimePoint deadline);

// Restores `step` on every task with a checkpoint dir; with step -1 the newest
// step that verifies on all of them (newer files passed over are listed in
// each task's `skipped` and logged), so that the tasks agree on one step;
// DATA_LOSS when files exist but no step verifies on every task.
kj::Promise<std::vector<TaskCheckpoints>> RestoreClusterCheckpoint(TaskEnv& env, int64_t step,
                                                                   kj::TimePoint deadline);

// The task's side of Worker.finishCheckpoint: `action` on `checkpoints` for
// `step`, the files concerned in `report`; a commit counts in `metrics`.
// Blocks on file I/O: run it on the pool.
Status FinishCheckpointOnTask(CheckpointManager& checkpoints, TaskMetrics& metrics, int64_t step,
                              proto::CheckpointAction action, TaskCheckpoints& report);

// Every task's checkpoints, oldest first, each file verified when `verify`.
kj::Promise<std::vector<TaskCheckpoints>> ListClusterCheckpoints(TaskEnv& env,
                                                                 kj::TimePoint deadline,
                                                                 bool verify);

}  // namespace tfd
