// The broadcasting engine behind every element-wise binary op: numpy
// broadcasting of two shapes, reduced to the fewest dimensions that still
// describe it, and one loop that evaluates an Eigen array expression over it.
//
// Any family may use it. A binary function is a callable taking two Eigen
// array expressions of equal length and returning an expression (so Eigen
// vectorises `a + b`, `a.max(b)`, `a > b`, ...); a scalar operand arrives as a
// constant array, so the same callable serves every path.
//
//   TFD_ASSIGN_OR_RETURN(BroadcastPlan plan, BroadcastPlan::Make(x.shape(), y.shape()));
//   TFD_RETURN_IF_ERROR(ctx.allocate_output(0, plan.output_shape(), &z));
//   ApplyBroadcast<float, float>(plan, x.data<float>(), y.data<float>(), z->data<float>(),
//                                [](const auto& a, const auto& b) { return a + b; });
//
// Thread-safety: a plan is an immutable value once made.
#pragma once

#include <cstdint>
#include <vector>

#include <Eigen/Core>

#include "common/shape.h"
#include "common/status.h"

namespace tfd::kernels {

class BroadcastPlan {
 public:
  // How ApplyBroadcast walks the output.
  enum class Kind {
    kSameShape,  // x, y and the output have identical shapes
    kScalarX,    // x has one element; y is laid out like the output
    kScalarY,    // y has one element; x is laid out like the output
    kGeneral,    // strided walk over the collapsed dimensions
  };

  // INVALID_ARGUMENT naming both shapes when a dimension pair is neither
  // equal nor 1.
  static StatusOr<BroadcastPlan> Make(const TensorShape& x, const TensorShape& y);

  const TensorShape& output_shape() const { return output_shape_; }
  Kind kind() const { return kind_; }

  // The collapsed form (meaningful for every kind, used for kGeneral):
  // adjacent output dimensions that are broadcast the same way in both inputs
  // are merged and size-1 dimensions dropped. Strides count elements; a
  // stride of 0 marks a dimension along which that input is repeated. For
  // [2, 1, 4] vs [3, 1]: dims [2, 3, 4], x strides [4, 0, 1], y [0, 1, 0].
  const std::vector<int64_t>& dims() const { return dims_; }
  const std::vector<int64_t>& x_strides() const { return x_strides_; }
  const std::vector<int64_t>& y_strides() const { return y_strides_; }

  // TensorFlow's gradient reduction indices (BroadcastGradientArgs): the
  // output axes, ascending, that a gradient of the output must be summed over
  // to get x's (y's) gradient. Identical shapes give none; axes where both
  // are 1 appear in both lists, as in TensorFlow.
  const std::vector<int64_t>& x_reduce_axes() const { return x_reduce_axes_; }
  const std::vector<int64_t>& y_reduce_axes() const { return y_reduce_axes_; }

 private:
  TensorShape output_shape_;
  Kind kind_ = Kind::kSameShape;
  std::vector<int64_t> dims_, x_strides_, y_strides_;
  std::vector<int64_t> x_reduce_axes_, y_reduce_axes_;
};

// Evaluates out = fn(x, y) element-wise under `plan`. x and y hold
// TIn elements laid out as the shapes given to Make; out holds
// plan.output_shape().num_elements() TOut elements and must not alias x or y
// unless it equals one of them with the same layout (kSameShape).
template <typename TIn, typename TOut, typename Fn>
void ApplyBroadcast(const BroadcastPlan& plan, const TIn* x, const TIn* y, TOut* out,
                    const Fn& fn) {
  using InArray = Eigen::Array<TIn, Eigen::Dynamic, 1>;
  using InMap = Eigen::Map<const InArray>;
  using OutMap = Eigen::Map<Eigen::Array<TOut, Eigen::Dynamic, 1>>;
  const int64_t n = plan.output_shape().num_elements();
  if (n == 0) return;
  switch (plan.kind()) {
    case BroadcastPlan::Kind::kSameShape:
      OutMap(out, n) = fn(InMap(x, n), InMap(y, n));
      return;
    case BroadcastPlan::Kind::kScalarX:
      OutMap(out, n) = fn(InArray::Constant(n, x[0]), InMap(y, n));
      return;
    case BroadcastPlan::Kind::kScalarY:
      OutMap(out, n) = fn(InMap(x, n), InArray::Constant(n, y[0]));
      return;
    case BroadcastPlan::Kind::kGeneral:
      break;
  }
  // One Eigen evaluation per row of the innermost collapsed dimension; an
  // odometer over the outer dimensions moves the input offsets. After the
  // collapse the innermost stride is 1 for an input that varies there and 0
  // for one that is repeated, never 0 for both.
  const std::vector<int64_t>& dims = plan.dims();
  const std::vector<int64_t>& xs = plan.x_strides();
  const std::vector<int64_t>& ys = plan.y_strides();
  const int outer_rank = static_cast<int>(dims.size()) - 1;
  const int64_t inner = dims.back();
  const bool x_repeats = xs.back() == 0, y_repeats = ys.back() == 0;
  std::vector<int64_t> index(outer_rank, 0);
  int64_t xo = 0, yo = 0;
  // TODO(perf): rows of a handful of elements would go faster as a plain loop.
  for (int64_t row_start = 0; row_start < n; row_start += inner) {
    OutMap row(out + row_start, inner);
    if (x_repeats) {
      row = fn(InArray::Constant(inner, x[xo]), InMap(y + yo, inner));
    } else if (y_repeats) {
      row = fn(InMap(x + xo, inner), InArray::Constant(inner, y[yo]));
    } else {
      row = fn(InMap(x + xo, inner), InMap(y + yo, inner));
    }
    for (int d = outer_rank - 1; d >= 0; --d) {
      xo += xs[d];
      yo += ys[d];
      if (++index[d] < dims[d]) break;
      xo -= xs[d] * dims[d];
      yo -= ys[d] * dims[d];
      index[d] = 0;
    }
  }
}

}  // namespace tfd::kernels
