// Partitioned variables: one logical variable split along axis 0 into
// shards, each an ordinary Variable named NAME/part_0, NAME/part_1, ...
// holding a contiguous block of rows, as tf.get_variable(...,
// partitioner=...) makes them. Each shard's VariableV2 goes through the
// scope's device function, so a ReplicaDeviceSetter spreads the shards over
// the ps tasks one by one, and each carries its slice of the whole
// (common/save_slice_info.h) so that checkpoints can restore it into
// another sharding.
//
// The rows are split as TensorFlow splits them: with R rows over S shards,
// the first R % S shards hold R / S + 1 rows and the rest R / S.
//
//   Scope root = Scope::NewRootScope(registry)
//       .WithDeviceFunction(train::ReplicaDeviceSetter({.ps_tasks = 2}));
//   PartitionedVariable emb(root.WithOpName("emb"), {1000, 16}, DType::kFloat32,
//                           Initializer::RandomNormal(0.01), FixedSizePartitioner(4));
//   for (const auto& s : emb.shards()) ...  // s.variable on ps 0, 1, 0, 1; s.first_row, s.rows
//   Output whole = emb.AsTensor(root);      // [1000, 16], the shards concatenated
//
// Thread-safety: as Scope (one thread per graph). Partitioners are pure.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "api/variables.h"
#include "common/status.h"

namespace tfd::ops {

// How many shards along axis 0 a variable of this shape and dtype gets:
// tf.fixed_size_partitioner and friends (TF's partitioners return a list
// per axis; ours split axis 0 only). An error fails the variable's creation.
using Partitioner = std::function<StatusOr<int>(const TensorShape& shape, DType dtype)>;

// Always `num_shards` (>= 1) shards: tf.fixed_size_partitioner(num_shards).
Partitioner FixedSizePartitioner(int num_shards);

// As many shards as make each at least `min_slice_size` bytes, rounded up,
// but at least 1 and at most `max_partitions` and the number of rows:
// tf.min_max_variable_partitioner(max_partitions, axis=0, min_slice_size).
// Strings count `bytes_per_string_element` bytes each, as in TensorFlow.
Partitioner MinMaxVariablePartitioner(int max_partitions, int64_t min_slice_size = 256 << 10,
                                      int64_t bytes_per_string_element = 16);

// A shard's rows of the whole: [first_row, first_row + rows).
struct RowRange {
  int64_t first_row = 0;
  int64_t rows = 0;
  bool operator==(const RowRange&) const = default;
};

// `rows` rows over `shards` shards, TensorFlow's split. INVALID_ARGUMENT
// for shards < 1, rows < 0, or more shards than rows (TensorFlow refuses
// them too: a shard would be empty).
StatusOr<std::vector<RowRange>> SplitRows(int64_t rows, int shards);

class PartitionedVariable {
 public:
  // One shard: its variable and its rows of the whole.
  struct Shard {
    Variable variable;
    int64_t first_row = 0;
    int64_t rows = 0;
  };

  PartitionedVariable() = default;  // invalid
  // Adds the shards, named scope.op_name() (or "PartitionedVariable") +
  // "/part_<i>". `shape` must have rank >= 1; each shard is initialized
  // with init.ForShard(...) (see Initializer::ForShard for seeded random
  // initializers) and created with `options`. An error (a partitioner's, a
  // rank-0 shape, more shards than rows) is kept by the scope and leaves
  // this invalid.
  PartitionedVariable(const Scope& scope, const TensorShape& shape, DType dtype,
                      const Initializer& init, const Partitioner& partitioner,
                      VariableOptions options = {});

  bool valid() const { return !shards_.empty(); }
  // The logical name ("emb", or "layer/emb" under a name scope).
  const std::string& name() const { return name_; }
  const TensorShape& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  // The shards in row order; what lookups over the table are built on.
  const std::vector<Shard>& shards() const { return shards_; }

  // The whole value: the shards' reads concatenated along axis 0
  // (partitioned_variable.as_tensor()), computed where the scope puts it.
  Output AsTensor(const Scope& scope) const;

 private:
  std::string name_;
  TensorShape shape_;
  DType dtype_ = DType::kInvalid;
  std::vector<Shard> shards_;
};

}  // namespace tfd::ops
