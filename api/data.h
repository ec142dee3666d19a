// Input-pipeline wrappers for the C++ graph API: an MNIST-format dataset
// kept by the task that runs it, and the batches, epochs and progress read
// from it (the ops are kernels/data's IdxDataset family; docs/ops.md); and
// Criteo TSV click logs, streamed (the CriteoDataset family); CIFAR binary
// files (CifarDataset).
//
//   IdxDatasetOptions o{.images_path = "train-images-idx3-ubyte",
//                       .labels_path = "train-labels-idx1-ubyte",
//                       .seed = 1, .epochs = 20, .num_shards = 2};
//   Output ds = ops::IdxDataset(root.WithOpName("train_data"), o);
//   ops::IdxBatch batch = ops::IdxNextBatch(root, ds, {.batch_size = 100, .one_hot = true});
//
// Paths are relative to the daemon's --data-dir. With num_shards > 0 each
// worker reads the shard of its own task index, so one graph file serves
// every worker.
//
// Thread-safety: as Scope (one thread per graph).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/scope.h"

namespace tfd::ops {

// The shuffle's seed attrs come from `seed` and the graph's seed
// (Scope::SetRandomSeed) by TF1's rule (api/random_seed.h), as
// Dataset.shuffle(seed) takes them: either set, the order is reproducible
// from it. Unlike TF1, neither set is not a fresh order per session but the
// fixed order of seed 0: workers reading disjoint shards of one permutation
// must all draw the same one.
struct IdxDatasetOptions {
  std::string images_path;
  std::string labels_path;
  bool shuffle = true;
  std::optional<int64_t> seed;  // the op seed; unset: the graph's seed decides
  int64_t epochs = -1;     // -1: repeat forever
  int64_t num_shards = 0;  // 0: every task reads everything
  std::string shared_name; // empty: the node's name
};

// The dataset's handle (a reference to the task's dataset resource).
Output IdxDataset(const Scope& scope, const IdxDatasetOptions& options);

struct IdxBatchOptions {
  int64_t batch_size = 100;
  bool one_hot = false;  // float32 one-hot rows instead of int32 class indices
  int64_t num_classes = 10;
  bool drop_remainder = false;
  // Draw and make the next batch on the dataset's thread while a step
  // computes (the order of batches is the same either way).
  bool prefetch = true;
};
struct IdxBatch {
  Output images;  // float32 [b, rows*cols] in [0, 1]
  Output labels;  // int32 [b], or float32 [b, num_classes] when one_hot
};
// The next batch; OUT_OF_RANGE when the last epoch is done.
IdxBatch IdxNextBatch(const Scope& scope, const Output& dataset, const IdxBatchOptions& options);

// Completed epochs (int64), and progress in epochs with the current one's
// fraction (float64).
Output IdxDatasetEpoch(const Scope& scope, const Output& dataset);
Output IdxDatasetProgress(const Scope& scope, const Output& dataset);
// Back to the start of epoch 0.
Operation IdxDatasetReset(const Scope& scope, const Output& dataset);

// Criteo display-advertising TSV files, read as one stream in file order:
//
//   Output ds = ops::CriteoDataset(root.WithOpName("train_data"),
//                                  {.paths = {"day_0"}, .num_buckets = 1 << 20, .num_shards = 2});
//   ops::CriteoBatch b = ops::CriteoNextBatch(root, ds, {.batch_size = 512});
struct CriteoDatasetOptions {
  std::vector<std::string> paths;  // inside the daemon's --data-dir, read in this order
  int64_t num_buckets = 1 << 20;   // rows of the table the categories hash into
  int64_t epochs = 1;              // -1: repeat forever
  int64_t num_shards = 0;          // 0: every task reads everything
  std::string shared_name;         // empty: the node's name
};
Output CriteoDataset(const Scope& scope, const CriteoDatasetOptions& options);

struct CriteoBatchOptions {
  int64_t batch_size = 512;
  bool drop_remainder = false;
  bool prefetch = true;  // read the next batch while a step computes
};
struct CriteoBatch {
  Output labels;  // float32 [b], 0 or 1
  Output dense;   // float32 [b, 13], the integer features (0 where empty)
  Output ids;     // int64 [b, 26], rows in [0, num_buckets), -1 for an empty field
};
// The next batch; OUT_OF_RANGE when the last epoch is done.
CriteoBatch CriteoNextBatch(const Scope& scope, const Output& dataset,
                            const CriteoBatchOptions& options);
Output CriteoDatasetEpoch(const Scope& scope, const Output& dataset);  // int64
Operation CriteoDatasetReset(const Scope& scope, const Output& dataset);

// CIFAR-10 (or CIFAR-100) binary files, held in memory like an IDX
// dataset: IdxDatasetEpoch, IdxDatasetProgress and IdxDatasetReset take the
// handle too.
//
//   Output ds = ops::CifarDataset(root.WithOpName("train_data"),
//                                 {.paths = {"data_batch_1.bin", "data_batch_2.bin"}});
//   ops::CifarBatch b = ops::CifarNextBatch(root, ds, {.batch_size = 128});
struct CifarDatasetOptions {
  std::vector<std::string> paths;  // inside the daemon's --data-dir, read in this order
  int64_t label_bytes = 1;         // 1: CIFAR-10; 2: CIFAR-100 (the fine label is used)
  bool shuffle = true;
  std::optional<int64_t> seed;  // as IdxDatasetOptions::seed
  int64_t epochs = -1;     // -1: repeat forever
  int64_t num_shards = 0;  // 0: every task reads everything
  std::string shared_name; // empty: the node's name
};
Output CifarDataset(const Scope& scope, const CifarDatasetOptions& options);

struct CifarBatchOptions {
  int64_t batch_size = 128;
  bool standardize = false;  // per image: mean 0, unit variance, instead of [0, 1]
  bool drop_remainder = false;
  bool prefetch = true;
};
struct CifarBatch {
  Output images;  // float32 [b, 32, 32, 3]
  Output labels;  // int32 [b]
};
// The next batch; OUT_OF_RANGE when the last epoch is done.
CifarBatch CifarNextBatch(const Scope& scope, const Output& dataset,
                          const CifarBatchOptions& options);

}  // namespace tfd::ops
