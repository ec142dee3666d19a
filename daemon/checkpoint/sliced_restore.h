// Restoring partitioned variables into another sharding.
//
// Each shard of a partitioned variable (api/partitioned_variables.h) is
// saved under its own key like any variable, and beside it, under
// "@slice/" + its key, a string scalar holding its SaveSliceInfo text
// (common/save_slice_info.h): which rows of which logical variable it
// holds. A restore of step S gives a shard whose slice is not what its own
// part saved (the job now has another shard count, or another ps count)
// the rows it needs from whichever saved slices overlap them, read from
// the parts of step S of every task of the --checkpoint-dir: this task's
// own and the other tasks' (DIR/<job>-<task>/ckpt-S.tfdckpt), so the tasks
// must share the directory (one host, or a shared file system;
// CheckpointManager::Options::cluster_dir).
//
//   SliceIndex index;
//   TFD_RETURN_IF_ERROR(index.Add(parts));             // every task's file of step S
//   TFD_ASSIGN_OR_RETURN(Tensor rows, index.Assemble("emb/part_2", want, DType::kFloat32));
//
// Thread-safety: not thread-safe; one restore uses one index.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/resource_mgr.h"
#include "common/save_slice_info.h"
#include "common/status.h"
#include "common/tensor.h"
#include "common/tensor_bundle/checkpoint_file.h"

namespace tfd {

// The namespace of the entries holding a shard's slice.
inline constexpr std::string_view kSliceNamespace = "@slice/";

// The files of checkpoint `step` that exist: `task_dir`'s own first, then
// (when `cluster_dir` is not empty) those of the other task directories
// under it, named <job>-<task> as tfd names them.
std::vector<std::filesystem::path> StepParts(const std::filesystem::path& cluster_dir,
                                             const std::filesystem::path& task_dir, int64_t step);

class SliceIndex {
 public:
  // Values read or assembled are charged to `memory` (null: not counted).
  explicit SliceIndex(std::shared_ptr<MemoryBudget> memory = nullptr)
      : memory_(std::move(memory)) {}

  // Indexes the "@slice/" entries of checkpoint file `path` (the values
  // are read only when Assemble needs them). Errors name the file.
  Status Add(const std::filesystem::path& path);

  // The rows of `want` (the slice of shard `shard`, of dtype `dtype`), from
  // the saved slices of its logical variable that overlap them.
  // NOT_FOUND naming the variable, the shard and the first rows that no
  // saved slice holds; FAILED_PRECONDITION when a saved slice's full shape
  // or value disagrees with `want`'s.
  StatusOr<Tensor> Assemble(const std::string& shard, const SaveSliceInfo& want,
                            DType dtype) const;

  // The value saved under `key` (a variable not partitioned) in the first
  // indexed file holding it: a variable that moved to this task from
  // another (a job with more ps tasks places its variables anew). nullopt
  // when no file holds it.
  StatusOr<std::optional<Tensor>> ReadEntry(const std::string& key) const;

  // Whether any indexed file holds a slice of logical variable `full_name`.
  bool Holds(const std::string& full_name) const { return slices_.count(full_name) != 0; }

 private:
  struct Saved {
    SaveSliceInfo slice;
    std::string key;                          // the shard's value's entry
    const kernels::CheckpointReader* reader;  // owned by readers_
  };
  // Copies the rows of `piece` (full-tensor rows, all within `s`) from the
  // saved value of `s` into `out`, whose first row is `out_first_row`.
  Status CopyRows(const Saved& s, const SaveSliceInfo& piece, Tensor& out,
                  int64_t out_first_row) const;

  std::shared_ptr<MemoryBudget> memory_;
  std::vector<std::unique_ptr<kernels::CheckpointReader>> readers_;
  std::multimap<std::string, Saved> slices_;  // by logical name
};

// Makes `entries`, this task's file of a checkpoint step (read whole), hold
// what each variable of `resources` is to restore, given `parts`, the
// step's files of every task (StepParts):
// - the "@slice/" entries are taken out (they describe; they restore
//   nothing) and returned, by the key of the shard they describe, for the
//   variables the restore creates;
// - a shard whose slice this file does not hold as it is now gets its rows
//   from the saved slices of every task's part of the step (SliceIndex);
// - any other variable this file lacks gets its value from another task's
//   part of the step, when one holds it.
// What it reads is charged to `memory` (null: not counted).
// Errors as SliceIndex's, with the task's file named.
using CheckpointEntries = std::vector<std::pair<std::string, Tensor>>;
StatusOr<std::map<std::string, SaveSliceInfo>> ReshardEntries(
    const std::vector<std::filesystem::path>& parts, ResourceMgr& resources,
    CheckpointEntries& entries, const std::shared_ptr<MemoryBudget>& memory = nullptr);

}  // namespace tfd
