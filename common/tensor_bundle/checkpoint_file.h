// Checkpoint files: named tensors in one file, written atomically and read
// back with every byte checked. The layout is docs/checkpoint_format.md.
//
//   TFD_RETURN_IF_ERROR(WriteCheckpoint(path, {"w", "b"}, {w, b}));
//   TFD_ASSIGN_OR_RETURN(Tensor w2, ReadTensor(path, "w"));
//   TFD_ASSIGN_OR_RETURN(auto reader, CheckpointReader::Open(path));
//   for (const CheckpointEntry& e : reader->entries()) ...
//
// A write goes to a temporary file in the same directory, is synced, and
// renamed over `path` (then the directory is synced), so a reader sees the
// old file or the new one, never a mix; on any failure the old file is left
// as it was. A read verifies the footer, the index checksum and each
// tensor's checksum: damage is DATA_LOSS "checkpoint 'PATH' is corrupt:
// ..." (TF1's DataLossError), a file of another format version
// FAILED_PRECONDITION, a missing tensor NOT_FOUND naming it.
//
// A tensor read with a MemoryBudget is charged to it for as long as its
// buffer lives, like any kernel output: a restored variable counts against
// the task's --memory-budget. One that does not fit is RESOURCE_EXHAUSTED
// naming the tensor and the file, and nothing of it is read.
//
// Paths are used as given: the ops confine them (KernelEnv::ResolveIoPath).
// Thread-safety: free functions are reentrant; a CheckpointReader may be
// shared by threads (reads use pread).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/tensor.h"

namespace tfd::kernels {

inline constexpr uint32_t kCheckpointVersion = 1;

// One tensor's index entry.
struct CheckpointEntry {
  std::string name;
  DType dtype = DType::kInvalid;
  TensorShape shape;
  uint64_t offset = 0;  // of the payload, from the start of the file
  uint64_t length = 0;  // payload bytes
  uint32_t crc = 0;     // CRC-32C of the payload
};

// Writes `tensors` under `names` (same length, names unique and non-empty).
Status WriteCheckpoint(const std::filesystem::path& path, const std::vector<std::string>& names,
                       const std::vector<Tensor>& tensors);

class CheckpointReader {
 public:
  // Opens `path` and checks its header, footer and index.
  static StatusOr<std::unique_ptr<CheckpointReader>> Open(const std::filesystem::path& path);
  ~CheckpointReader();
  CheckpointReader(const CheckpointReader&) = delete;
  CheckpointReader& operator=(const CheckpointReader&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // In the order they were written.
  const std::vector<CheckpointEntry>& entries() const { return entries_; }
  // nullptr when absent.
  const CheckpointEntry* Find(const std::string& name) const;
  // Reads and verifies one tensor, charged to `budget` when one is given;
  // NOT_FOUND naming it when absent.
  StatusOr<Tensor> ReadTensor(const std::string& name,
                              const std::shared_ptr<MemoryBudget>& budget = nullptr) const;
  StatusOr<Tensor> ReadTensor(const CheckpointEntry& entry,
                              const std::shared_ptr<MemoryBudget>& budget = nullptr) const;

 private:
  CheckpointReader(std::filesystem::path path, int fd) : path_(std::move(path)), fd_(fd) {}
  Status ReadIndex(uint64_t file_size);
  // Room for `e`'s value, charged to `budget`; errors name the tensor.
  StatusOr<Tensor> AllocateFor(const CheckpointEntry& e,
                               const std::shared_ptr<MemoryBudget>& budget) const;

  std::filesystem::path path_;
  int fd_;
  std::vector<CheckpointEntry> entries_;
};

// Conveniences over CheckpointReader. ReadCheckpoint reads every tensor,
// each charged to `budget` when one is given: all of them or none.
StatusOr<std::vector<std::pair<std::string, Tensor>>> ReadCheckpoint(
    const std::filesystem::path& path, const std::shared_ptr<MemoryBudget>& budget = nullptr);
StatusOr<Tensor> ReadTensor(const std::filesystem::path& path, const std::string& name,
                            const std::shared_ptr<MemoryBudget>& budget = nullptr);

}  // namespace tfd::kernels
