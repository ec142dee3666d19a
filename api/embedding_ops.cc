#include "api/embedding_ops.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "api/variables.h"

namespace tfd::ops {
namespace {

constexpr char kMod[] = "mod";
constexpr char kDiv[] = "div";

// Shard rows when the graph knows them, else -1.
int64_t RowsOf(const Output& shard) {
  return shard.shape.rank_known() && shard.shape.rank() >= 1 ? shard.shape.dim(0) : -1;
}

// The table's rows in all, when the graph knows every shard's size.
std::optional<int64_t> KnownRows(const std::vector<Output>& shards) {
  int64_t total = 0;
  for (const Output& shard : shards) {
    if (RowsOf(shard) < 0) return std::nullopt;
    total += RowsOf(shard);
  }
  return total;
}

// With every shard's size known: the sizes must be those the strategy
// assumes (TF's arithmetic, which is SplitRows' for both strategies: with
// "mod", shard s holds the ids s, s + n, ..., as many as "div" gives it).
Status CheckShardSizes(const std::string& name, const std::vector<Output>& shards,
                       const std::string& strategy) {
  const std::optional<int64_t> rows = KnownRows(shards);
  if (!rows) return OkStatus();  // checked at run time by the ops themselves
  const int64_t total = *rows;
  auto want = SplitRows(total, static_cast<int>(shards.size()));
  if (!want.ok()) {
    return errors::InvalidArgument("embedding lookup '", name, "': ", want.status().message());
  }
  for (size_t i = 0; i < shards.size(); ++i) {
    if (RowsOf(shards[i]) != (*want)[i].rows) {
      return errors::InvalidArgument(
          "embedding lookup '", name, "': shard ", i, " ('", shards[i].node, "') has ",
          RowsOf(shards[i]), " rows, but partition strategy '", strategy, "' over ", total,
          " rows in ", shards.size(), " shards needs ", (*want)[i].rows);
    }
  }
  return OkStatus();
}

// What can be checked while the graph is built, each error naming the lookup.
Status CheckLookup(const std::string& name, const std::vector<Output>& shards, const Output& ids,
                   const EmbeddingLookupAttrs& attrs) {
  if (shards.empty()) {
    return errors::InvalidArgument("embedding lookup '", name, "' has no shards in params");
  }
  if (ids.dtype != DType::kInt32 && ids.dtype != DType::kInt64) {
    return errors::InvalidArgument("embedding lookup '", name, "': ids must be int32 or int64, not ",
                                   DTypeName(ids.dtype));
  }
  if (attrs.partition_strategy != kMod && attrs.partition_strategy != kDiv) {
    return errors::InvalidArgument("embedding lookup '", name,
                                   "': partition_strategy must be 'mod' or 'div', not '",
                                   attrs.partition_strategy, "'");
  }
  if (attrs.max_norm && !(*attrs.max_norm > 0)) {
    return errors::InvalidArgument("embedding lookup '", name, "': max_norm must be > 0, not ",
                                   *attrs.max_norm);
  }
  const Output& first = shards[0];
  for (size_t i = 0; i < shards.size(); ++i) {
    const PartialShape& shape = shards[i].shape;
    if (shards[i].dtype != first.dtype) {
      return errors::InvalidArgument("embedding lookup '", name, "': shard ", i, " is ",
                                     DTypeName(shards[i].dtype), " but shard 0 is ",
                                     DTypeName(first.dtype));
    }
    if (shape.rank() == 0) {
      return errors::InvalidArgument("embedding lookup '", name, "': shard ", i,
                                     " is a scalar; a table needs rank >= 1");
    }
    if (!shape.rank_known() || !first.shape.rank_known()) continue;
    const PartialShape row(std::vector<int64_t>(shape.dims().begin() + 1, shape.dims().end()));
    const PartialShape row0(
        std::vector<int64_t>(first.shape.dims().begin() + 1, first.shape.dims().end()));
    if (!row.IsCompatibleWith(row0)) {
      return errors::InvalidArgument("embedding lookup '", name, "': shard ", i, " has rows of ",
                                     row.ToString(), " but shard 0 has rows of ",
                                     row0.ToString());
    }
  }
  return shards.size() == 1 ? OkStatus()
                            : CheckShardSizes(name, shards, attrs.partition_strategy);
}

// A scalar of the ids' integer dtype.
Output IdConst(const Scope& s, DType dtype, int64_t value) {
  return Const(s, dtype == DType::kInt32 ? Tensor::Scalar<int32_t>(static_cast<int32_t>(value))
                                         : Tensor::Scalar<int64_t>(value));
}

// The dtype the shard arithmetic is done in: the ids', as in TF, unless
// int32 ids index a table too long for int32 row counts.
DType ArithmeticType(DType ids, const std::vector<Output>& shards) {
  const std::optional<int64_t> rows = KnownRows(shards);
  return rows && *rows > std::numeric_limits<int32_t>::max() ? DType::kInt64 : ids;
}

// The table's rows in all, as a scalar of `dtype`: a constant when every
// shard's size is known, else summed from the shards' shapes at run time.
Output TotalRows(const Scope& s, const std::vector<Output>& shards, DType dtype) {
  if (const std::optional<int64_t> rows = KnownRows(shards)) return IdConst(s, dtype, *rows);
  Output total;
  for (const Output& shard : shards) {
    const Output rows = Cast(s, Gather(s, Shape(s, shard), 0), dtype);
    total = total.valid() ? Add(s, total, rows) : rows;
  }
  return total;
}

// Fails the step when an id is outside [0, total): a Gather from a table of
// `total` rows of no columns, which costs no memory and whose kernel names
// the id and its position in `ids`. It runs where the ids are, so a bad id
// never reaches a shard, where "mod" might map it onto an existing row.
Operation CheckIds(const Scope& s, const Output& ids, const std::vector<Output>& shards,
                   const Output& total) {
  Output vocabulary;
  if (const std::optional<int64_t> rows = KnownRows(shards)) {
    vocabulary = Const(s.WithOpName("vocabulary"),
                       Tensor::FromVector<bool>({}, TensorShape({*rows, 0})));
  } else {
    const Output dims = Stack(s, {Cast(s, total, DType::kInt64), IdConst(s, DType::kInt64, 0)});
    vocabulary = Fill(s.WithOpName("vocabulary"), dims, false);
  }
  return AsOperation(Gather(s.WithOpName("ids_in_vocabulary"), vocabulary, ids));
}

// Each id's shard (int32) and its row within the shard, by TF's
// embedding_ops.py arithmetic.
struct Placement {
  Output shard;
  Output row;
};

Placement PlaceIds(const Scope& s, const Output& ids, int64_t num_shards, const Output& total,
                   const std::string& strategy) {
  const Output n = IdConst(s, ids.dtype, num_shards);
  if (strategy == kMod) {
    return {Cast(s, FloorMod(s, ids, n), DType::kInt32), FloorDiv(s, ids, n)};
  }
  // "div": the first `extras` shards hold per + 1 rows, the others per.
  const Output per = FloorDiv(s, total, n);
  const Output extras = FloorMod(s, total, n);
  const Output per_plus_one = Add(s, per, 1);
  const Output past_extras = Sub(s, ids, extras);
  const Output shard =
      Maximum(s, FloorDiv(s, ids, per_plus_one), FloorDiv(s, past_extras, per));
  const Output row = Select(s, Less(s, shard, extras), FloorMod(s, ids, per_plus_one),
                            FloorMod(s, past_extras, per));
  return {Cast(s, shard, DType::kInt32), row};
}

// Rows x ([k, row...]) whose L2 norm exceeds max_norm scaled down to it:
// TF's clip_by_norm over every axis but the first.
Output ClipRows(const Scope& s, const Output& x, double max_norm) {
  Output axes;
  if (x.shape.rank_known()) {
    std::vector<int32_t> a;
    for (int d = 1; d < x.shape.rank(); ++d) a.push_back(d);
    axes = Const(s, Tensor::FromVector<int32_t>(a));
  } else {
    axes = Range(s, 1, Rank(s, x), 1);
  }
  const Output l2sum = Sum(s, Mul(s, x, x), axes, {.keep_dims = true});
  const Output positive = Greater(s, l2sum, 0);
  // sqrt only where the sum is positive, so that the gradient at 0 is finite.
  const Output safe = Select(s, positive, l2sum, OnesLike(s, l2sum));
  const Output l2norm = Select(s, positive, Sqrt(s, safe), l2sum);
  return Div(s, Mul(s, x, max_norm), Maximum(s, l2norm, max_norm));
}

// The rows ([k, row...]) of the distinct ids `unique_ids` ([k]): each
// shard gathers its ids' rows on its own device, and DynamicStitch puts
// them back in the order of unique_ids.
Output GatherUnique(const Scope& s, const std::vector<Output>& shards, const Output& unique_ids,
                    const Output& total, const EmbeddingLookupAttrs& attrs) {
  auto gather = [&](const Output& shard, const Output& ids) {
    const Scope at = s.ColocatedWith(shard);
    const Output rows = Gather(at, shard, ids);
    return attrs.max_norm ? ClipRows(at, rows, *attrs.max_norm) : rows;
  };
  if (shards.size() == 1) return gather(shards[0], unique_ids);
  const int64_t n = static_cast<int64_t>(shards.size());
  const Output ids = unique_ids.dtype == total.dtype ? unique_ids : Cast(s, unique_ids, total.dtype);
  const Placement placed = PlaceIds(s, ids, n, total, attrs.partition_strategy);
  const Output positions = Range(s, 0, Size(s, unique_ids), 1);
  const Operation shard_ids =
      s.AddOperation("DynamicPartition", {placed.row, placed.shard}, {{"num_partitions", n}});
  const Operation shard_positions =
      s.AddOperation("DynamicPartition", {positions, placed.shard}, {{"num_partitions", n}});
  std::vector<Output> stitch_in;
  for (int p = 0; p < n; ++p) stitch_in.push_back(shard_positions.output(p));
  for (int p = 0; p < n; ++p) stitch_in.push_back(gather(shards[p], shard_ids.output(p)));
  // N is given: it cannot be inferred from the two lists that share it.
  return s.AddOperation("DynamicStitch", stitch_in, {{"N", n}}).output(0);
}

// The shape of the lookup's result, ids.shape + the row shape: a constant
// (with -1 for one unknown dimension) when the graph knows enough, so that
// the result's shape is inferred; else computed at run time.
Output ResultShape(const Scope& s, const Output& ids, const Output& shard) {
  const PartialShape& table = shard.shape;
  std::optional<std::vector<int32_t>> row;  // the row's shape, when known
  if (table.rank_known() && std::count(table.dims().begin() + 1, table.dims().end(), -1) == 0) {
    row.emplace(table.dims().begin() + 1, table.dims().end());
  }
  if (row && ids.shape.rank_known()) {
    std::vector<int32_t> dims(ids.shape.dims().begin(), ids.shape.dims().end());
    dims.insert(dims.end(), row->begin(), row->end());
    if (std::count(dims.begin(), dims.end(), -1) <= 1) {
      return Const(s, Tensor::FromVector<int32_t>(dims));
    }
  }
  const Output row_shape =
      row ? Const(s, Tensor::FromVector<int32_t>(*row)) : Slice(s, Shape(s, shard), {1}, {-1});
  return Concat(s, {Shape(s, ids), row_shape}, 0);
}

// The distinct ids of the (vector) `ids` and each one's position among
// them, once every id is known to be in the table.
Operation UniqueIds(const Scope& s, const Output& ids, const std::vector<Output>& shards,
                    const Output& total) {
  const Operation checked = CheckIds(s, ids, shards, total);
  const Scope after = s.WithControlDependencies(std::vector<Operation>{checked});
  return after.AddOperation("Unique", {Reshape(after, ids, {-1})});
}

}  // namespace

EmbeddingParams::EmbeddingParams(const PartitionedVariable& v) {
  for (const PartitionedVariable::Shard& shard : v.shards()) shards.push_back(shard.variable);
}
EmbeddingParams::EmbeddingParams(std::vector<Output> s) : shards(std::move(s)) {}
EmbeddingParams::EmbeddingParams(const Output& table) : shards{table} {}
EmbeddingParams::EmbeddingParams(const Variable& table) : shards{table.value()} {}

Output EmbeddingLookup(const Scope& scope, const EmbeddingParams& params, const Input& ids_in,
                       const EmbeddingLookupAttrs& attrs) {
  const std::string name = scope.op_name().empty() ? "embedding_lookup" : scope.op_name();
  const Scope s = scope.WithName(name);
  const Output ids = AsOutput(s, ids_in);
  if (!ids.valid() || !scope.ok()) return Output();
  if (Status bad = CheckLookup(name, params.shards, ids, attrs); !bad.ok()) {
    scope.UpdateStatus(bad);
    return Output();
  }
  const Output total =
      TotalRows(s, params.shards, ArithmeticType(ids.dtype, params.shards));
  const Operation unique = UniqueIds(s, ids, params.shards, total);
  const Output rows = GatherUnique(s, params.shards, unique.output(0), total, attrs);
  const Output each = Gather(s, rows, unique.output(1));
  return Reshape(scope.WithOpName(name), each, ResultShape(s, ids, params.shards[0]));
}

namespace {

// Each entry's weight w_i, reshaped [n, 1, ...] to multiply its row.
Output WeightsPerRow(const Scope& s, const Output& weights, const Output& rows) {
  if (rows.shape.rank_known()) {
    std::vector<int32_t> dims(rows.shape.rank(), 1);
    dims[0] = -1;
    return Reshape(s, weights, Const(s, Tensor::FromVector<int32_t>(dims)));
  }
  const Output ones = Fill(s, ExpandDims(s, Sub(s, Rank(s, rows), 1), 0), 1);
  return Reshape(s, weights, Concat(s, {Shape(s, weights), ones}, 0));
}

// TF's weighted combiners: the segment sums of w_i * e_i, divided by the
// sums of w_i ("mean") or the roots of the sums of w_i^2 ("sqrtn"). A batch
// row with no entries divides by 1 rather than 0, so it comes out as zeros.
Output CombineWeighted(const Scope& s, const Scope& out, const Output& each,
                       const Output& weights, const Output& segments,
                       const std::string& combiner) {
  const Output w = WeightsPerRow(s, weights, each);
  const Output positions = Range(s, 0, Size(s, segments), 1);
  auto segment_sum = [&](const Scope& at, const Output& data) {
    return at.AddOperation("SparseSegmentSum", {data, positions, segments}).output(0);
  };
  if (combiner == "sum") return segment_sum(out, Mul(s, each, w));
  const Output sum = segment_sum(s, Mul(s, each, w));
  Output norm = segment_sum(s, combiner == "mean" ? w : Square(s, w));
  if (combiner == "sqrtn") norm = Sqrt(s, norm);
  const Output entries = segment_sum(s, OnesLike(s, w));
  const Output divisor = Select(s, Greater(s, entries, 0), norm, OnesLike(s, norm));
  return Div(out, sum, divisor);
}

Status CheckSparse(const std::string& name, const SparseTensor& sp_ids,
                   const std::optional<SparseTensor>& sp_weights, const std::string& combiner) {
  if (combiner != "sum" && combiner != "mean" && combiner != "sqrtn") {
    return errors::InvalidArgument("embedding lookup '", name,
                                   "': combiner must be 'sum', 'mean' or 'sqrtn', not '",
                                   combiner, "'");
  }
  const PartialShape& indices = sp_ids.indices.shape;
  if (sp_ids.indices.dtype != DType::kInt64 || (indices.rank_known() && indices.rank() != 2)) {
    return errors::InvalidArgument("embedding lookup '", name,
                                   "': sp_ids.indices must be an int64 matrix [n, 2], not ",
                                   DTypeName(sp_ids.indices.dtype), " ",
                                   indices.ToString());
  }
  if (sp_weights && !sp_weights->values.shape.IsCompatibleWith(sp_ids.values.shape)) {
    return errors::InvalidArgument("embedding lookup '", name, "': sp_weights.values ",
                                   sp_weights->values.shape.ToString(),
                                   " does not match sp_ids.values ",
                                   sp_ids.values.shape.ToString());
  }
  return OkStatus();
}

}  // namespace

Output EmbeddingLookupSparse(const Scope& scope, const EmbeddingParams& params,
                             const SparseTensor& sp_ids,
                             const std::optional<SparseTensor>& sp_weights,
                             const std::string& combiner, const EmbeddingLookupAttrs& attrs) {
  const std::string name = scope.op_name().empty() ? "embedding_lookup_sparse" : scope.op_name();
  const Scope s = scope.WithName(name);
  const Scope out = scope.WithOpName(name);
  const Output& ids = sp_ids.values;
  if (!scope.ok() || !ids.valid() || !sp_ids.indices.valid() ||
      (sp_weights && !sp_weights->values.valid())) {
    return Output();
  }
  Status bad = CheckLookup(name, params.shards, ids, attrs);
  if (bad.ok()) bad = CheckSparse(name, sp_ids, sp_weights, combiner);
  if (!bad.ok()) {
    scope.UpdateStatus(bad);
    return Output();
  }
  const Output total =
      TotalRows(s, params.shards, ArithmeticType(ids.dtype, params.shards));
  const Operation unique = UniqueIds(s, ids, params.shards, total);
  const Output rows = GatherUnique(s, params.shards, unique.output(0), total, attrs);
  const Output segments = GatherV2(s, sp_ids.indices, 0, 1);  // each entry's batch row
  if (!sp_weights) {
    const std::string op = combiner == "sum"    ? "SparseSegmentSum"
                           : combiner == "mean" ? "SparseSegmentMean"
                                                : "SparseSegmentSqrtN";
    return out.AddOperation(op, {rows, unique.output(1), segments}).output(0);
  }
  Output weights = sp_weights->values;
  if (weights.dtype != rows.dtype) weights = Cast(s, weights, rows.dtype);
  const Output each = Gather(s, rows, unique.output(1));
  return CombineWeighted(s, out, each, weights, segments, combiner);
}

Output StringToHashBucketFast(const Scope& scope, const Input& input, int64_t num_buckets) {
  return scope
      .AddOperation("StringToHashBucketFast", {AsOutput(scope, input)},
                    {{"num_buckets", num_buckets}})
      .output(0);
}

}  // namespace tfd::ops
