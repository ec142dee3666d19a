// Sparse gradients in the graph being built: densifying IndexedSlices and
// summing the gradients that reach one tensor, the one place that decides
// whether a sum stays sparse.
#include <utility>

#include "common/gradients.h"

namespace tfd {
namespace {

Output ConstOf(const Scope& s, Tensor value) {
  const DType dtype = value.dtype();
  return s.AddOperation("Const", {}, {{"value", std::move(value)}, {"dtype", dtype}}).output(0);
}

// The first element of dense_shape as a scalar: a constant when known.
Output NumRows(const Scope& s, const Output& dense_shape) {
  const Tensor known = s.ConstantValue(dense_shape);
  if (known.initialized() && known.rank() == 1 && known.num_elements() >= 1) {
    if (known.dtype() == DType::kInt32) {
      return ConstOf(s, Tensor::Scalar<int32_t>(known.data<int32_t>()[0]));
    }
    if (known.dtype() == DType::kInt64) {
      return ConstOf(s, Tensor::Scalar<int64_t>(known.data<int64_t>()[0]));
    }
  }
  const Output begin = ConstOf(s, Tensor::FromVector<int32_t>({0}));
  const Output size = ConstOf(s, Tensor::FromVector<int32_t>({1}));
  const Output first = s.AddOperation("Slice", {dense_shape, begin, size}).output(0);
  return s.AddOperation("Reshape", {first, ConstOf(s, Tensor::FromVector<int32_t>({}))}).output(0);
}

// Several slices as one: values and indices concatenated (indices as int64
// when their types differ), the first's dense_shape.
IndexedSlices Concatenate(const Scope& s, const std::vector<Gradient>& grads) {
  bool mixed = false;
  for (const Gradient& g : grads) {
    mixed = mixed || g.sparse.indices.dtype != grads[0].sparse.indices.dtype;
  }
  const Output axis = ConstOf(s, Tensor::Scalar<int32_t>(0));
  std::vector<Output> values, indices;
  for (const Gradient& g : grads) {
    values.push_back(g.sparse.values);
    Output ids = g.sparse.indices;
    if (mixed && ids.dtype != DType::kInt64) {
      ids = s.AddOperation("Cast", {ids}, {{"DstT", DType::kInt64}}).output(0);
    }
    indices.push_back(ids);
  }
  values.push_back(axis);
  indices.push_back(axis);
  return {s.AddOperation("ConcatV2", values).output(0),
          s.AddOperation("ConcatV2", indices).output(0), grads[0].sparse.dense_shape};
}

}  // namespace

Output Densify(const Scope& scope, const IndexedSlices& slices) {
  const Scope s = scope.WithName("densify");
  return s.AddOperation("UnsortedSegmentSum",
                        {slices.values, slices.indices, NumRows(s, slices.dense_shape)})
      .output(0);
}

Output DenseOf(const Scope& scope, const Gradient& g) {
  return g.is_sparse() ? Densify(scope, g.sparse) : g.dense;
}

Gradient AggregateGradients(const Scope& scope, const std::vector<Gradient>& grads) {
  std::vector<Gradient> valid;
  for (const Gradient& g : grads) {
    if (g.valid()) valid.push_back(g);
  }
  if (valid.empty()) return Gradient();
  if (valid.size() == 1) return valid[0];
  bool all_sparse = true;
  for (const Gradient& g : valid) all_sparse = all_sparse && g.is_sparse();
  if (all_sparse) return Gradient{.sparse = Concatenate(scope, valid)};
  std::vector<Output> dense;
  for (const Gradient& g : valid) dense.push_back(DenseOf(scope, g));
  return Gradient{.dense = scope.AddOperation("AddN", dense).output(0)};
}

}  // namespace tfd
