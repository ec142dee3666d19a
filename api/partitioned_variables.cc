#include "api/partitioned_variables.h"

#include <algorithm>

#include "common/save_slice_info.h"

namespace tfd::ops {
namespace {

// The part of `name` after the scope's prefix ("layer1/emb" -> "emb").
std::string LeafOf(const Scope& scope, const std::string& name) {
  const std::string& prefix = scope.name_prefix();
  return prefix.empty() ? name : name.substr(prefix.size() + 1);
}

// The shards' row ranges for `shape`, or the error naming the variable.
StatusOr<std::vector<RowRange>> PlanShards(const std::string& name, const TensorShape& shape,
                                           DType dtype, const Partitioner& partitioner) {
  if (shape.rank() < 1) {
    return errors::InvalidArgument("partitioned variable '", name,
                                   "' must have rank >= 1 to be split along axis 0, not shape ",
                                   shape.ToString());
  }
  if (!partitioner) {
    return errors::InvalidArgument("partitioned variable '", name, "' has no partitioner");
  }
  TFD_ASSIGN_OR_RETURN(const int shards, partitioner(shape, dtype));
  return SplitRows(shape.dim(0), shards);
}

}  // namespace

Partitioner FixedSizePartitioner(int num_shards) {
  return [num_shards](const TensorShape&, DType) -> StatusOr<int> {
    if (num_shards < 1) {
      return errors::InvalidArgument("fixed size partitioner: num_shards must be >= 1, not ",
                                     num_shards);
    }
    return num_shards;
  };
}

Partitioner MinMaxVariablePartitioner(int max_partitions, int64_t min_slice_size,
                                      int64_t bytes_per_string_element) {
  return [=](const TensorShape& shape, DType dtype) -> StatusOr<int> {
    if (max_partitions < 1 || min_slice_size < 1) {
      return errors::InvalidArgument("min-max partitioner: max_partitions (", max_partitions,
                                     ") and min_slice_size (", min_slice_size,
                                     ") must be >= 1");
    }
    if (shape.rank() < 1) {
      return errors::InvalidArgument("min-max partitioner: shape ", shape.ToString(),
                                     " has no axis 0 to split");
    }
    const int64_t element =
        dtype == DType::kString ? bytes_per_string_element : static_cast<int64_t>(DTypeSize(dtype));
    const int64_t bytes = shape.num_elements() * element;
    const int64_t wanted = (bytes + min_slice_size - 1) / min_slice_size;  // ceil
    const int64_t most = std::min<int64_t>(shape.dim(0), max_partitions);
    return static_cast<int>(std::max<int64_t>(1, std::min(most, wanted)));
  };
}

StatusOr<std::vector<RowRange>> SplitRows(int64_t rows, int shards) {
  if (shards < 1 || rows < 0 || shards > rows) {
    return errors::InvalidArgument("cannot split ", rows, " rows into ", shards,
                                   " shards: need 1 <= shards <= rows");
  }
  std::vector<RowRange> out;
  const int64_t base = rows / shards;
  const int64_t larger = rows % shards;  // the first `larger` shards get one row more
  int64_t next = 0;
  for (int i = 0; i < shards; ++i) {
    const int64_t n = base + (i < larger ? 1 : 0);
    out.push_back({next, n});
    next += n;
  }
  return out;
}

PartitionedVariable::PartitionedVariable(const Scope& scope, const TensorShape& shape,
                                         DType dtype, const Initializer& init,
                                         const Partitioner& partitioner,
                                         VariableOptions options) {
  const Scope base = scope.WithNoControlDependencies();
  const std::string name =
      base.UniqueName(scope.op_name().empty() ? "PartitionedVariable" : scope.op_name());
  auto ranges = PlanShards(name, shape, dtype, partitioner);
  if (!ranges.ok()) {
    scope.UpdateStatus(ranges.status());
    return;
  }
  const Scope inner = base.WithName(LeafOf(base, name));
  std::vector<Shard> shards;
  for (size_t i = 0; i < ranges->size(); ++i) {
    const RowRange r = (*ranges)[i];
    const SaveSliceInfo slice{name, shape, r.first_row, r.rows};
    VariableOptions o = options;
    o.save_slice_info = slice.ToString();
    Variable v(inner.WithOpName("part_" + std::to_string(i)), slice.ShardShape(), dtype,
               init.ForShard(shape, r.first_row, r.rows, static_cast<int>(i)), o);
    if (!v.valid()) return;  // the scope holds the error
    shards.push_back({std::move(v), r.first_row, r.rows});
  }
  name_ = name;
  shape_ = shape;
  dtype_ = dtype;
  shards_ = std::move(shards);
}

Output PartitionedVariable::AsTensor(const Scope& scope) const {
  if (shards_.size() == 1) return Identity(scope, shards_[0].variable.value());
  std::vector<Output> parts;
  for (const Shard& s : shards_) parts.push_back(s.variable.value());
  return Concat(scope, parts, 0);
}

}  // namespace tfd::ops
