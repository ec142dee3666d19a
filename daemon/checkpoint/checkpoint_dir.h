// The layout of a task's checkpoint directory (--checkpoint-dir): one file
// per checkpoint, `ckpt-<step>.tfdckpt`, in the format of
// common/tensor_bundle/checkpoint_file.h. Nothing else in the directory is ours: other
// files are ignored, never deleted. docs/checkpoint_format.md describes it.
//
//   TFD_ASSIGN_OR_RETURN(auto files, ScanCheckpointDir(dir));   // oldest first
//   const auto path = dir / CheckpointFileName(120);           // "ckpt-120.tfdckpt"
//   TFD_ASSIGN_OR_RETURN(auto deleted, PruneCheckpoints(dir, /*keep=*/5));
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

// The checkpoint files in `dir`, oldest first. NOT_FOUND naming `dir` when it
// does not exist.
StatusOr<std::vector<CheckpointFile>> ScanCheckpointDir(const std::filesystem::path& dir);

// Deletes all but the `keep` newest checkpoint files (keep >= 1), returning
// the paths deleted. A file that cannot be deleted fails the call naming it.
StatusOr<std::vector<std::filesystem::path>> PruneCheckpoints(const std::filesystem::path& dir,
                                                              int keep);

// Deletes temporary files a writer killed mid-save left behind
// (".ckpt-*.tfdckpt.tmp-*"), returning their paths. Only safe while nobody
// writes to `dir`: at daemon start.
StatusOr<std::vector<std::filesystem::path>> RemoveStaleTemporaries(
    const std::filesystem::path& dir);

}  // namespace tfd
