// CheckpointManager: the checkpoints of one task's variables in its
// --checkpoint-dir — save, list, restore, keep the newest few.
//
// A checkpoint is one file `ckpt-<step>.tfdckpt` (daemon/checkpoint/checkpoint_dir.h)
// holding every checkpointed resource of the task's ResourceMgr, each as one
// tensor under its key (kernels/framework/resource.h; the format is
// docs/checkpoint_format.md, "Checkpoint directories"): a variable under its
// name in the default container, "container:name" elsewhere; a dataset's
// position under "@input/KEY", so that a restored task reads on from where
// the saved model left its input; any other kind under its own "@word/"
// namespace. The manager knows resources only through that interface.
//
// A cluster checkpoint is saved in phases, so that no task counts or
// prunes on a step another task failed to write (daemon/distributed/checkpoint_fanout.h):
// every task Writes its part as a pending file; once all have, every task
// Commits it (the pending file becomes the checkpoint); once all have,
// every task Prunes relative to it. A part some task failed to write is
// Discarded by the others; a commit some task failed is Reverted by the
// others. Save does all three for a task on its own.
//
//   CheckpointManager::Options options;
//   options.dir = "/var/lib/tfd/ckpt";
//   TFD_ASSIGN_OR_RETURN(auto ckpts, CheckpointManager::Open(options, resources, logger));
//   TFD_RETURN_IF_ERROR(ckpts->Write(1200).status());      // on every task, then
//   TFD_RETURN_IF_ERROR(ckpts->Commit(1200).status());     // on every task, then
//   TFD_RETURN_IF_ERROR(ckpts->Prune(1200).status());      // on every task
//   TFD_ASSIGN_OR_RETURN(CheckpointManager::Restored r, ckpts->Restore(std::nullopt));
//
// Write snapshots each variable under its own lock (values are copy-on-write,
// so this costs no copy and does not stall training) and writes the file
// atomically; variables are not snapshotted together, as in TensorFlow's
// asynchronous training (a cluster save holds the steps meanwhile). Restore
// reads and verifies the whole file before assigning anything, so a damaged
// file changes no variable. Pending parts are never restored or listed.
//
// Thread-safety: every method may be called from any thread; writes,
// commits, prunes, discards and restores are serialised. Calls block on
// file I/O: keep them off the event loop.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "common/memory_budget.h"
#include "common/mutex.h"
#include "common/resource_mgr.h"
#include "common/status.h"
#include "common/tensor.h"
#include "daemon/checkpoint/checkpoint_dir.h"
#include "daemon/checkpoint/checkpoint_info.h"

namespace tfd {

class CheckpointManager {
 public:
  struct Options {
    std::filesystem::path dir;  // created when missing
    // The --checkpoint-dir that holds every task's directory as
    // <job>-<task> (dir is one of them), when the tasks share it: a restore
    // then reads what this task's own file lacks — rows of a resharded
    // partitioned variable, a variable that moved here — from the other
    // tasks' files of the step (daemon/checkpoint/sliced_restore.h). Empty:
    // this task's own file only.
    std::filesystem::path cluster_dir;
    // Checkpoints kept after a successful save; older ones are deleted. A
    // handful covers a corrupt newest file without filling the disk.
    int keep = 5;
    // The task's memory budget (--memory-budget), which restored values
    // are charged to for as long as they live, as any variable's value is.
    // Null: not counted (a tool, a test).
    std::shared_ptr<MemoryBudget> memory;
  };
  struct Saved {
    CheckpointInfo checkpoint;
    std::vector<std::filesystem::path> pruned;
  };
  struct Restored {
    CheckpointInfo checkpoint;
    std::vector<std::string> variables;  // keys assigned, variables first, then "@input/..."
    std::vector<std::string> skipped;    // latest: newer files passed over, "PATH: why"
  };

  // Creates the directory if needed and removes what saves that did not
  // finish left behind: temporaries and pending parts (a part whose save
  // never reached its commit here is not needed: no task prunes before
  // every task has committed, so the step before it is still on every
  // task). INVALID_ARGUMENT for an empty dir or keep < 1.
  static StatusOr<std::unique_ptr<CheckpointManager>> Open(Options options, ResourceMgr& resources,
                                                        std::shared_ptr<spdlog::logger> logger);

  const std::filesystem::path& dir() const { return options_.dir; }

  // Writes every checkpointed resource that holds something (an initialized
  // variable, a dataset that was read) as this task's pending part of
  // checkpoint `step` (>= 0; replacing a pending part of the same step).
  // A failed write — a failed fsync included — fails with the error naming
  // the file and the system's reason, and leaves nothing behind; no
  // checkpoint is touched either way. The info is the pending file's.
  StatusOr<CheckpointInfo> Write(int64_t step);
  // Makes the pending part of `step` this task's checkpoint of `step`
  // (replacing one of the same step) and syncs the directory. NOT_FOUND
  // when there is no pending part of `step`.
  StatusOr<CheckpointInfo> Commit(int64_t step);
  // Retention, once checkpoint `step` is on every task: keeps it, every
  // newer file and the keep - 1 newest older ones, and deletes the rest and
  // older pending parts (PruneCheckpoints). Returns what it deleted.
  StatusOr<std::vector<std::filesystem::path>> Prune(int64_t step);
  // Deletes the pending part of `step`, if any.
  Status Discard(int64_t step);
  // Takes back the commit of `step` when another task could not commit
  // its part: the checkpoint goes back to being the pending part (which
  // Discard then deletes). Nothing to take back is no error.
  Status Revert(int64_t step);

  // A checkpoint of this task alone: Write, Commit, then Prune (whose
  // failure is only logged: the checkpoint exists).
  StatusOr<Saved> Save(int64_t step);

  // The checkpoints, oldest first; with `verify`, each file's checksums are
  // all checked (reads every file whole) and the outcome reported per file.
  StatusOr<std::vector<CheckpointInfo>> List(bool verify) const;

  // Assigns the saved values to the task's variables, creating those that do
  // not exist (marked as restored, so the first VariableV2 of that name
  // adopts them), and moves its datasets' cursors to the saved positions (a
  // dataset not created yet takes its position up when its op creates it;
  // any other kind likewise, kernels::TakePendingRestore). Every value is
  // checked before any is assigned. Variables the file lacks are left alone;
  // datasets it lacks, which had not been read when it was saved, start over
  // at epoch 0 (kernels::Resource::RestoreAbsent).
  // - step given: that checkpoint; NOT_FOUND when there is none,
  //   DATA_LOSS "checkpoint 'PATH' is corrupt: ..." when damaged.
  // - nullopt: the newest that verifies; damaged newer ones are logged as
  //   warnings and listed in `skipped`. NOT_FOUND when the directory holds no
  //   checkpoint, DATA_LOSS naming each file when none verifies.
  // The values are read, charged to Options::memory, before any is
  // assigned: RESOURCE_EXHAUSTED naming the first that does not fit (an
  // older checkpoint is not tried instead) leaves every variable as it was.
  StatusOr<Restored> Restore(std::optional<int64_t> step);

 private:
  CheckpointManager(Options options, ResourceMgr& resources, std::shared_ptr<spdlog::logger> logger)
      : options_(std::move(options)), resources_(resources), logger_(std::move(logger)) {}

  // Restore's choice of file, read whole and verified: that of `step`, or
  // the newest that verifies (the newer ones passed over go to `skipped`).
  using ReadFile = std::pair<CheckpointFile, std::vector<std::pair<std::string, Tensor>>>;
  StatusOr<ReadFile> ReadStep(const std::vector<CheckpointFile>& files, int64_t step) const;
  StatusOr<ReadFile> ReadNewest(const std::vector<CheckpointFile>& files,
                                std::vector<std::string>& skipped) const;

  const Options options_;
  ResourceMgr& resources_;
  std::shared_ptr<spdlog::logger> logger_;  // may be null
  // Held by every method that changes the directory, and by Restore, for
  // its whole run.
  mutable Mutex mu_;
};

// The key a resource (a variable) is saved under within its namespace, and
// back. INVALID_ARGUMENT for a key that cannot be told apart: a container,
// or a name in the default container, holding ':'; or one that would read
// as another kind's namespace ("@word/...").
StatusOr<std::string> CheckpointKey(const std::string& container, const std::string& name);
std::pair<std::string, std::string> SplitCheckpointKey(const std::string& key);

}  // namespace tfd
