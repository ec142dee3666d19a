// The layout of a task's checkpoint directory (--checkpoint-dir): one file
// per checkpoint, `ckpt-<step>.tfdckpt`, in the format of
// common/tensor_bundle/checkpoint_file.h, and while a cluster checkpoint is
// being saved, this task's part of it, `ckpt-<step>.tfdckpt.pending`, which
// becomes the checkpoint (renamed) only once every task has written its
// part. Nothing else in the directory is ours: other files are ignored,
// never deleted. docs/checkpoint_format.md describes it.
//
//   TFD_ASSIGN_OR_RETURN(auto files, ScanCheckpointDir(dir));   // oldest first
//   const auto path = dir / CheckpointFileName(120);           // "ckpt-120.tfdckpt"
//   TFD_ASSIGN_OR_RETURN(auto deleted, PruneCheckpoints(dir, /*keep=*/5, /*complete=*/120));
//
// "Newest" means most recently written (modification time, then step), not
// highest step: after a restore of an older step, training continues from
// that step and its new checkpoints must not be the first to be pruned.
//
// Thread-safety: free functions; callers serialise writers of one directory
// (daemon/checkpoint/checkpoint_manager.h does).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tfd {

// One checkpoint file found in a directory.
struct CheckpointFile {
  int64_t step = 0;
  std::filesystem::path path;
  uint64_t bytes = 0;
  int64_t mtime_ns = 0;  // since the Unix epoch
};

// "ckpt-<step>.tfdckpt" with `step` in decimal, no leading zeros. step >= 0.
std::string CheckpointFileName(int64_t step);
// The step of a file named by CheckpointFileName; nullopt for any other name.
std::optional<int64_t> ParseCheckpointFileName(std::string_view name);
// "ckpt-<step>.tfdckpt.pending": a part of a cluster checkpoint not known to
// be complete on every task. No restore takes it.
std::string PendingCheckpointFileName(int64_t step);
std::optional<int64_t> ParsePendingCheckpointFileName(std::string_view name);

// The checkpoint files in `dir`, oldest first. NOT_FOUND naming `dir` when it
// does not exist.
StatusOr<std::vector<CheckpointFile>> ScanCheckpointDir(const std::filesystem::path& dir);
// The pending parts in `dir`, oldest first.
StatusOr<std::vector<CheckpointFile>> ScanPendingCheckpoints(const std::filesystem::path& dir);

// Retention once checkpoint `complete` is known to be complete on every
// task: its file is kept, and so is every file newer than it (none of them
// is known complete everywhere); of the older ones the `keep` - 1 newest
// are kept (keep >= 1) and the rest deleted, with every pending part older
// than it (a save that never finished). Returns the paths deleted.
// NOT_FOUND, deleting nothing, when `dir` has no checkpoint of `complete`.
// A file that cannot be deleted fails the call naming it.
StatusOr<std::vector<std::filesystem::path>> PruneCheckpoints(const std::filesystem::path& dir,
                                                              int keep, int64_t complete);

// Deletes what saves that did not finish left behind: a writer's temporary
// files (".ckpt-*.tfdckpt[.pending].tmp-*") and pending parts, returning
// their paths. Only safe while nobody writes to `dir`: at daemon start.
StatusOr<std::vector<std::filesystem::path>> RemoveUnfinishedSaves(
    const std::filesystem::path& dir);

}  // namespace tfd
