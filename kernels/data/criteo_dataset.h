// CriteoDataset: Criteo display-advertising TSV files (criteo_line.h) held
// by a task's ResourceMgr as one streamed input: a CriteoReader over this
// task's shard, the place of the last batch handed out (checkpointed as an
// InputPosition, as IdxDataset's is) and at most one batch read ahead.
//
// Unlike IdxDataset the files are never held whole: a day of Criteo data is
// 45 M lines. There is no shuffle (click logs are read in time order, as
// TF's CTR examples read them); shards take every num_shards-th line.
//
//   auto ds = std::make_shared<CriteoDataset>("train", spec);
//   TFD_RETURN_IF_ERROR(ds->Open(env));           // resolves the paths
//   TFD_ASSIGN_OR_RETURN(CriteoBatch b, ds->Next(512, false, deadline));
//   ds->ReadAhead(512, false);                    // the next batch, on its thread
//
// A batch read ahead is not yet read as far as the position, the epoch and
// a checkpoint are concerned; a restore or a reset drops it.
// Thread-safety: every method may be called from any thread. Reads hold the
// dataset's lock, so a DebugString during a read waits for it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "common/op_kernel.h"
#include "common/resource_mgr.h"
#include "kernels/data/batch_prefetch.h"
#include "kernels/data/criteo_reader.h"
#include "kernels/data/input_position.h"

namespace tfd::kernels::data {

struct CriteoDatasetSpec {
  std::vector<std::string> paths;  // as written in the graph; resolved per task
  int64_t num_buckets = 1 << 20;
  int64_t epochs = 1;  // -1: forever
  int64_t shard_index = 0;
  int64_t num_shards = 1;

  bool operator==(const CriteoDatasetSpec&) const = default;
  // "files 'a', 'b', 1048576 buckets, 1 epoch, shard 0 of 2".
  std::string ToString() const;
};

// One batch, row-major: labels [n], dense [n, 13], ids [n, 26].
struct CriteoBatch {
  std::vector<float> labels;
  std::vector<float> dense;
  std::vector<int64_t> ids;
  int64_t size() const { return static_cast<int64_t>(labels.size()); }
};

class CriteoDataset : public Resource {
 public:
  CriteoDataset(std::string name, CriteoDatasetSpec spec);
  ~CriteoDataset() override;

  std::string_view Kind() const override { return "Criteo dataset"; }
  std::string DebugString() const override;

  // Resource: "criteo_dataset"; checkpointed under "@input/" as IdxDataset.
  ResourceDescription Describe() const override;
  std::optional<std::string_view> CheckpointNamespace() const override {
    return kInputPositionKeyPrefix;
  }
  std::optional<Tensor> CheckpointValue() const override;
  Status CheckRestore(const Tensor& saved, const std::string& key,
                      const std::string& file) const override;
  Status Restore(const Tensor& saved, const std::string& key) override;
  void RestoreAbsent() override { Reset(); }

  const CriteoDatasetSpec& spec() const { return spec_; }
  Status CheckSameSpec(const CriteoDatasetSpec& other) const;
  // As IdxDataset::BindReader: one session at a time moves the cursor.
  Status BindReader(const SessionPresence& reader);

  // Resolves the paths through env.ResolveIoPath on the first call (the
  // files are opened by the first read).
  Status Open(const KernelEnv& env);

  // The next up to `batch_size` examples: the batch read ahead when there is
  // one for this size, else read now. OUT_OF_RANGE once the last epoch is
  // done (or, with drop_remainder, when what is left is short); the
  // reader's errors otherwise (criteo_reader.h), and DEADLINE_EXCEEDED when
  // a read ahead in progress does not finish by `deadline`.
  StatusOr<CriteoBatch> Next(int64_t batch_size, bool drop_remainder,
                             std::chrono::steady_clock::time_point deadline);
  // Starts reading the next batch on the dataset's thread, unless one is
  // read ahead already.
  void ReadAhead(int64_t batch_size, bool drop_remainder);
  // Waits until no read ahead is in progress; false when one still is at
  // `deadline`. For tests that look at a quiescent dataset.
  bool WaitForReadAhead(std::chrono::steady_clock::time_point deadline);

  // The epoch of the next example handed out (0-based).
  int64_t epoch() const;
  // Back to the start of epoch 0.
  void Reset();

  // The place after the last batch handed out; nullopt before any.
  std::optional<InputPosition> Position() const;
  // FAILED_PRECONDITION unless `p` was taken under this shard, unshuffled.
  // Whether it lies inside the files is known only when the reader skips
  // to it (the next Next).
  Status AcceptsPosition(const InputPosition& p) const;
  Status SetPosition(const InputPosition& p);

 private:
  struct Ahead {
    int64_t batch_size;
    bool drop_remainder;
    StatusOr<CriteoBatch> batch;
    int64_t epoch, position;  // the reader's place after it
  };

  // A reader at the handed-out place. Requires Open.
  std::unique_ptr<CriteoReader> MakeReader() const REQUIRES(mu_);
  // Drops the batch read ahead and any read in progress; a new reader
  // starts at the handed-out place.
  void RestartLocked() REQUIRES(mu_);
  // The handed-out place is now (epoch, position).
  void MoveToLocked(int64_t epoch, int64_t position) REQUIRES(mu_);
  static StatusOr<CriteoBatch> ReadBatch(CriteoReader& reader, int64_t batch_size,
                                         bool drop_remainder, const std::string& name);

  const std::string name_;
  const CriteoDatasetSpec spec_;

  mutable Mutex mu_;
  std::condition_variable read_done_;
  std::vector<std::filesystem::path> files_ GUARDED_BY(mu_);  // empty until Open
  std::unique_ptr<CriteoReader> reader_ GUARDED_BY(mu_);  // null while read ahead, or unopened
  bool reading_ GUARDED_BY(mu_) = false;   // the thread holds the reader
  uint64_t generation_ GUARDED_BY(mu_) = 0;  // bumped by a restart: a late read is dropped
  std::optional<Ahead> ahead_ GUARDED_BY(mu_);
  int64_t epoch_ GUARDED_BY(mu_) = 0;     // the handed-out place
  int64_t position_ GUARDED_BY(mu_) = 0;
  bool moved_ GUARDED_BY(mu_) = false;    // a batch was handed out or a place set
  SessionPresence holder_ GUARDED_BY(mu_);

  PrefetchThread thread_{/*idle_priority=*/false};  // last: stops before the rest goes
};

}  // namespace tfd::kernels::data
