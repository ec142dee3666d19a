// IdxDataset: an MNIST-format dataset (an IDX images file and an IDX labels
// file), or a CIFAR one (binary record files), held by a task's ResourceMgr,
// with a cursor that walks it epoch by epoch — the input pipeline's state,
// kept by the task (so checkpoints hold it and a trainer's next session
// reads on) and read by one master session at a time: a second trainer on
// the task is refused instead of silently taking half the batches
// (BindReader).
//
// The files are read once, on the first EnsureLoaded, under the dataset's own
// lock (not the ResourceMgr's, so a slow read holds up no other resource).
// The examples are then immutable and shared with every batch taken, so the
// cursor's lock covers only the choice of indices, not the copying of pixels.
//
//   auto ds = std::make_shared<IdxDataset>("mnist", spec);
//   TFD_RETURN_IF_ERROR(ds->EnsureLoaded(env));     // resolves through env.io_dirs
//   TFD_ASSIGN_OR_RETURN(IdxDataset::Batch b, ds->Next(100, /*drop_remainder=*/false));
//   // b.examples->images.pixels, b.indices: the 100 (or fewer) examples to emit
//
// Batches run across epoch boundaries (a batch may end one epoch and start
// the next); only the last batch of the last epoch can be short.
// Thread-safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "common/op_kernel.h"
#include "common/resource_mgr.h"
#include "kernels/data/batch_prefetch.h"
#include "kernels/data/cifar_file.h"
#include "kernels/data/epoch_order.h"
#include "kernels/data/idx_file.h"
#include "kernels/data/input_position.h"

namespace tfd::kernels::data {

// What a dataset is made of; two graphs that share a dataset must agree on it.
// Its examples come from an IDX pair (images_path, labels_path) or, when
// cifar_paths is set, from CIFAR binary files (cifar_file.h).
struct IdxDatasetSpec {
  std::string images_path;  // as written in the graph; resolved per task
  std::string labels_path;
  std::vector<std::string> cifar_paths;  // read in this order
  int64_t label_bytes = 1;               // CIFAR: 1 (CIFAR-10) or 2 (CIFAR-100)
  bool shuffle = true;
  int64_t seed = 0;
  int64_t epochs = -1;       // -1: forever
  int64_t shard_index = 0;
  int64_t num_shards = 1;    // 1: unsharded

  bool operator==(const IdxDatasetSpec&) const = default;
  // "images 'a', labels 'b', shuffle seed 7, 10 epochs, shard 1 of 2".
  std::string ToString() const;
};

class IdxDataset : public Resource {
 public:
  struct Examples {
    IdxImages images;  // CIFAR's as 32x32 with 3 channels, HWC
    int64_t channels = 1;
    IdxLabels labels;
    std::string labels_path;  // for messages about a label's value
  };
  struct Batch {
    std::shared_ptr<const Examples> examples;
    std::vector<int64_t> indices;  // into examples, in the order to emit
  };

  IdxDataset(std::string name, IdxDatasetSpec spec);

  std::string_view Kind() const override {
    return spec_.cifar_paths.empty() ? "IDX dataset" : "CIFAR dataset";
  }
  // "IDX dataset 'mnist': 60000 examples of 28x28, shard 0 of 2, epoch 3 of 10".
  std::string DebugString() const override;

  // kernels::Resource: described as "idx_dataset", initialized once loaded;
  // checkpointed as its Position() under "@input/" (docs/checkpoint_format.md).
  // A restore checks the position as AcceptsPosition does and moves the
  // cursor there; a restore that names no position for it starts it over.
  ResourceDescription Describe() const override;
  std::optional<std::string_view> CheckpointNamespace() const override {
    return kInputPositionKeyPrefix;
  }
  std::optional<Tensor> CheckpointValue() const override;
  Status CheckRestore(const Tensor& saved, const std::string& key,
                      const std::string& file) const override;
  Status Restore(const Tensor& saved, const std::string& key) override;
  void RestoreAbsent() override { Reset(); }

  const std::string& name() const { return name_; }
  const IdxDatasetSpec& spec() const { return spec_; }
  // INVALID_ARGUMENT saying what differs unless `other` is this dataset's spec.
  Status CheckSameSpec(const IdxDatasetSpec& other) const;

  // Ties the cursor to the session `reader` (StepContext::session) unless
  // another session that still holds partitions on this task has it; then
  // FAILED_PRECONDITION naming both sessions. Once that session has closed
  // or its client has gone, the next session reads on from where it left
  // the cursor (a trainer's new session after a failed step). Sessions in
  // one process (an empty `reader`) are not tied. What moves the cursor
  // binds first (IdxNextBatch, IdxDatasetReset); reading the epoch or
  // progress does not.
  Status BindReader(const SessionPresence& reader);

  // Reads the files through env.ResolveIoPath on the first call; after a
  // success, later calls return at once. A failure leaves the dataset
  // unloaded, so a later call (say, after the file is fixed) tries again.
  Status EnsureLoaded(const KernelEnv& env);

  // The next up to `batch_size` (>= 1) examples of this shard. OUT_OF_RANGE
  // once the last epoch is done, or when the shard holds no example at all.
  // With drop_remainder, a final batch that would be short is dropped and
  // OUT_OF_RANGE returned instead. FAILED_PRECONDITION before a load.
  StatusOr<Batch> Next(int64_t batch_size, bool drop_remainder);

  // Drawing ahead, for a prefetch. Reserve draws the next batch as Next
  // does, but the batch counts as unread until Commit(ticket): Position(),
  // epoch(), progress() and a checkpoint report the cursor from its start,
  // and any other use of the cursor (Next, Reserve, SetPosition, Reset)
  // first puts it back, so batches are emitted in the order Next alone would
  // give. A draw that fails leaves the cursor where it was; the next Next
  // meets the same error. Tickets are unique in the process.
  struct Reserved {
    Batch batch;
    uint64_t ticket = 0;
  };
  StatusOr<Reserved> Reserve(int64_t batch_size, bool drop_remainder);
  // Marks the reserved batch `ticket` read. False when it was put back
  // meanwhile: the caller must draw again.
  bool Commit(uint64_t ticket);

  // Where batches drawn ahead are made: one thread per dataset, started by
  // the first prefetch.
  PrefetchThread& prefetch_thread() { return prefetch_thread_; }

  // The epoch the next example comes from (0-based), which is also how many
  // epochs are complete; equals spec().epochs once exhausted.
  int64_t epoch() const;
  // Back to the start of epoch 0, as a fresh dataset: a new training run on
  // a task whose cursor an earlier run moved (or exhausted).
  void Reset();

  // The cursor, for a checkpoint: where the next example comes from once
  // loaded; before a load, a position set to be taken up by it; else nullopt
  // (nothing read, nothing to keep).
  std::optional<InputPosition> Position() const;
  // Moves the cursor to a checkpoint's position. FAILED_PRECONDITION naming
  // what differs when the position was taken under another order (shard,
  // seed, shuffle; once loaded, the example count) or lies past the data.
  // Before a load the position is kept and checked by the load, which then
  // fails the same way.
  Status SetPosition(const InputPosition& p);
  // SetPosition's checks alone: whether it would succeed now.
  Status AcceptsPosition(const InputPosition& p) const;

  // Epochs completed, with the fraction of the current one (2.25: a quarter
  // into the third); what a trainer shows as its epoch. 0 before a load.
  double progress() const;

 private:
  Status Exhausted() const REQUIRES(mu_);
  // Next's draw.
  StatusOr<Batch> NextLocked(int64_t batch_size, bool drop_remainder) REQUIRES(mu_);
  // Moves the cursor to (epoch, position), keeping order_ within an epoch.
  void MoveCursorLocked(int64_t epoch, int64_t position) REQUIRES(mu_);
  // Puts a reserved batch back: the cursor returns to its start.
  void PutBackLocked() REQUIRES(mu_);
  // The cursor as a reader sees it: a reserved batch counts as unread.
  int64_t ReadEpochLocked() const REQUIRES(mu_) {
    return reserved_ ? reserved_->epoch : epoch_;
  }
  int64_t ReadPositionLocked() const REQUIRES(mu_) {
    return reserved_ ? reserved_->position : position_;
  }
  // The example count once loaded, else nullopt.
  std::optional<int64_t> LoadedCount() const REQUIRES(mu_);
  // The examples of the IDX pair or of the CIFAR files, as the spec says.
  StatusOr<std::shared_ptr<Examples>> LoadIdx(const KernelEnv& env) const;
  StatusOr<std::shared_ptr<Examples>> LoadCifar(const KernelEnv& env) const;
  // SetPosition's checks; the example count only when known.
  Status CheckPosition(const InputPosition& p, std::optional<int64_t> count) const
      REQUIRES(mu_);

  const std::string name_;
  const IdxDatasetSpec spec_;

  mutable Mutex mu_;
  std::shared_ptr<const Examples> examples_ GUARDED_BY(mu_);  // null until loaded
  EpochOrderSpec order_spec_ GUARDED_BY(mu_);                 // set by the load
  int64_t epoch_ GUARDED_BY(mu_) = 0;
  int64_t position_ GUARDED_BY(mu_) = 0;                      // into order_
  std::vector<int64_t> order_ GUARDED_BY(mu_);                // epoch_'s order, or empty
  std::optional<InputPosition> pending_ GUARDED_BY(mu_);      // set before the load
  struct ReservedStart {
    uint64_t ticket;
    int64_t epoch, position;  // the cursor before the reserved batch
  };
  std::optional<ReservedStart> reserved_ GUARDED_BY(mu_);
  SessionPresence reader_ GUARDED_BY(mu_);  // the session the cursor belongs to (BindReader)

  PrefetchThread prefetch_thread_;  // last: its thread stops before the rest goes
};

}  // namespace tfd::kernels::data
