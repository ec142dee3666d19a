// Embedding lookups over tables that may be partitioned across ps tasks, as
// TensorFlow 1's tf.nn.embedding_lookup and tf.nn.embedding_lookup_sparse:
// the ids are deduplicated, split by the shard that holds each one, each
// shard gathers its rows where it lives (the Gather is colocated with the
// shard), and the rows are stitched back into the order of the ids. Only
// the distinct ids of a batch cross to the ps tasks, and only their rows
// come back. The graph is built of Unique, DynamicPartition, Gather and
// DynamicStitch, whose gradients exist, so training through a lookup works.
//
// Which shard holds an id (n shards, R rows in all):
//   "mod": shard id % n, row id / n within it (TF's default);
//   "div": contiguous ranges, the first R % n shards one row longer, as
//          PartitionedVariable splits a table and as checkpoints record it.
// Only "div" keeps every id on its row when a checkpoint is restored into
// another shard count; "mod" moves ids between rows when n changes.
//
// Every id is checked against the whole table, before any leaves the
// worker: one outside [0, R) fails the step with INVALID_ARGUMENT from the
// node "<lookup>/ids_in_vocabulary", naming the id and its position.
//
//   PartitionedVariable emb(root.WithOpName("emb"), {100000, 16}, DType::kFloat32,
//                           Initializer::RandomNormal(0.01), FixedSizePartitioner(4));
//   Output ids = ops::Placeholder(root.WithOpName("ids"), DType::kInt64, {-1, 5});
//   Output rows = ops::EmbeddingLookup(root.WithOpName("lookup"), emb, ids,
//                                      {.partition_strategy = "div"});   // [?, 5, 16]
//
// Thread-safety: as Scope (one thread per graph).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/partitioned_variables.h"

namespace tfd::ops {

// The table a lookup reads: its shards in row order, each an Output of the
// same dtype and row shape (a PartitionedVariable's shard values, a list of
// tensors, or one tensor or variable for an unpartitioned table).
struct EmbeddingParams {
  EmbeddingParams(const PartitionedVariable& v);   // NOLINT: implicit, as TF takes either
  EmbeddingParams(std::vector<Output> shards);     // NOLINT
  EmbeddingParams(const Output& table);            // NOLINT
  EmbeddingParams(const Variable& table);          // NOLINT

  std::vector<Output> shards;
};

struct EmbeddingLookupAttrs {
  // "mod" or "div" (see above); irrelevant for a table of one shard.
  std::string partition_strategy = "mod";
  // When set (> 0), each looked-up row whose L2 norm exceeds it is scaled
  // down to that norm, on the shard's task (TF's max_norm, clip_by_norm).
  std::optional<double> max_norm;
};

// The rows of `params` for `ids` (int32 or int64, any shape): a tensor of
// shape ids.shape + the row shape. The result is named scope.op_name()
// (default "embedding_lookup"); its inner nodes sit under that name. Bad
// arguments (no shards, shards of different dtypes or row shapes, shard
// sizes that do not fit the strategy, non-integer ids, an unknown strategy,
// max_norm <= 0) are errors of the scope.
Output EmbeddingLookup(const Scope& scope, const EmbeddingParams& params, const Input& ids,
                       const EmbeddingLookupAttrs& attrs = {});

// A sparse batch, as tf.SparseTensor: entry i is values[i] at position
// indices[i] of a dense tensor of shape dense_shape. For
// EmbeddingLookupSparse, indices is int64 [n, 2] (batch row, position in
// the row) sorted by row, as TF's canonical order has it.
struct SparseTensor {
  Output indices;      // int64 [n, rank]
  Output values;       // [n]
  Output dense_shape;  // int64 [rank]
};

// One combined embedding per row of a batch of multi-valued features:
// row b of the result combines the rows of the ids sp_ids holds in batch
// row b (sp_ids.values, int32 or int64), weighted by sp_weights.values when
// given (same indices as sp_ids; cast to the table's dtype):
//   "sum":   sum_i w_i * e_i
//   "mean":  sum_i w_i * e_i / sum_i w_i
//   "sqrtn": sum_i w_i * e_i / sqrt(sum_i w_i^2)
// (unweighted: every w_i = 1). The result has max(batch row) + 1 rows, as
// in TensorFlow: a batch row without ids is a row of zeros unless it is
// past the last row with ids, in which case there is no such row at all.
// (TF gives NaN for an empty row in the weighted "mean" and "sqrtn"; here
// it is zeros with every combiner.) Named and checked as EmbeddingLookup;
// an unknown combiner is an error of the scope.
Output EmbeddingLookupSparse(const Scope& scope, const EmbeddingParams& params,
                             const SparseTensor& sp_ids,
                             const std::optional<SparseTensor>& sp_weights,
                             const std::string& combiner = "mean",
                             const EmbeddingLookupAttrs& attrs = {});

// String features as ids: each string's bucket in [0, num_buckets), TF's
// tf.strings.to_hash_bucket_fast (FarmHash Fingerprint64 modulo
// num_buckets, the same bucket TensorFlow gives the string). int64, of the
// input's shape; look the result up in a table of num_buckets rows.
Output StringToHashBucketFast(const Scope& scope, const Input& input, int64_t num_buckets);

}  // namespace tfd::ops
