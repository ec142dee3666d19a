// Graph-building helpers shared by the gradient functions of all families.
#include "kernels/math/grad_util.h"

#include <optional>

#include "kernels/math/broadcast.h"

namespace tfd::kernels::grad {
namespace {

// The values of a constant int32/int64 vector or scalar, else nullopt.
std::optional<std::vector<int64_t>> ConstInts(const Scope& s, const Output& o) {
  const Tensor t = s.ConstantValue(o);
  if (!t.initialized() || t.rank() > 1) return std::nullopt;
  std::vector<int64_t> v;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    if (t.dtype() == DType::kInt32) {
      v.push_back(t.data<int32_t>()[i]);
    } else if (t.dtype() == DType::kInt64) {
      v.push_back(t.data<int64_t>()[i]);
    } else {
      return std::nullopt;
    }
  }
  return v;
}

// Which dimensions of a rank-`rank` tensor `axes` reduces; nullopt when an
// axis is out of range (the forward op has already reported it).
std::optional<std::vector<bool>> ReducedMask(const std::vector<int64_t>& axes, int rank) {
  std::vector<bool> mask(rank, false);
  for (int64_t a : axes) {
    if (a < -rank || a >= rank) return std::nullopt;
    mask[a < 0 ? a + rank : a] = true;
  }
  return mask;
}

// KeptShape computed in the graph, for unknown ranks or non-constant axes.
Output DynamicKeptShape(const Scope& s, const Output& x, const Output& axes) {
  const Output rank = Op(s, "Rank", {x});
  Output a = axes.dtype == DType::kInt32 ? axes : Cast(s, axes, DType::kInt32);
  a = Reshape(s, a, IntVector(s, {-1}));
  // Negative axes count from the end: a + rank * (a < 0).
  const Output negative = Cast(s, Op(s, "Less", {a, IntScalar(s, 0)}), DType::kInt32);
  a = Add(s, a, Mul(s, negative, rank));
  const Output hot = Op(s, "OneHot", {a, rank, IntScalar(s, 1), IntScalar(s, 0)});
  const Output mask = Op(s, "Minimum", {Sum(s, hot, IntScalar(s, 0)), IntScalar(s, 1)});
  return Add(s, Mul(s, Op(s, "Shape", {x}), Sub(s, IntScalar(s, 1), mask)), mask);
}

}  // namespace

Output Op(const Scope& s, const std::string& op, const std::vector<Output>& inputs,
          AttrMap attrs) {
  return s.AddOperation(op, inputs, std::move(attrs)).output(0);
}

Output Const(const Scope& s, Tensor value) {
  const DType dtype = value.dtype();
  return Op(s, "Const", {}, {{"value", std::move(value)}, {"dtype", dtype}});
}

Output IntVector(const Scope& s, const std::vector<int64_t>& v) {
  std::vector<int32_t> v32(v.begin(), v.end());
  return Const(s, Tensor::FromVector<int32_t>(v32));
}

Output IntScalar(const Scope& s, int64_t v) {
  return Const(s, Tensor::Scalar<int32_t>(static_cast<int32_t>(v)));
}

Output ScalarLike(const Scope& s, double v, const Output& like) {
  if (like.dtype == DType::kFloat32) return Const(s, Tensor::Scalar<float>(static_cast<float>(v)));
  return Const(s, Tensor::Scalar<double>(v));
}

Output ShapeOf(const Scope& s, const Output& x) {
  if (auto known = x.shape.AsTensorShape()) return IntVector(s, known->dims());
  return Op(s, "Shape", {x});
}

Output Reshape(const Scope& s, const Output& x, const Output& shape) {
  return Op(s, "Reshape", {x, shape});
}

Output ReshapeLike(const Scope& s, const Output& x, const Output& like) {
  if (x.shape.IsFullyDefined() && x.shape == like.shape) return x;
  return Reshape(s, x, ShapeOf(s, like));
}

Output Sum(const Scope& s, const Output& x, const Output& axes, bool keep_dims) {
  return Op(s, "Sum", {x, axes}, {{"keep_dims", keep_dims}});
}

Output Cast(const Scope& s, const Output& x, DType to) {
  if (x.valid() && x.dtype == to) return x;
  return Op(s, "Cast", {x}, {{"DstT", to}});
}

Output Add(const Scope& s, const Output& x, const Output& y) { return Op(s, "Add", {x, y}); }
Output Sub(const Scope& s, const Output& x, const Output& y) { return Op(s, "Sub", {x, y}); }
Output Mul(const Scope& s, const Output& x, const Output& y) { return Op(s, "Mul", {x, y}); }
Output Div(const Scope& s, const Output& x, const Output& y) { return Op(s, "Div", {x, y}); }
Output Neg(const Scope& s, const Output& x) { return Op(s, "Neg", {x}); }
Output ZerosLike(const Scope& s, const Output& x) { return Op(s, "ZerosLike", {x}); }

std::pair<Output, Output> SumBroadcast(const Scope& s, const Output& x, const Output& y,
                                       const Output& gx, const Output& gy) {
  const auto xs = x.shape.AsTensorShape(), ys = y.shape.AsTensorShape();
  if (xs && ys) {
    auto plan = BroadcastPlan::Make(*xs, *ys);
    if (!plan.ok()) {
      s.UpdateStatus(plan.status());
      return {Output(), Output()};
    }
    auto reduce = [&](const Output& g, const std::vector<int64_t>& axes, const TensorShape& to) {
      if (!g.valid() || axes.empty()) return g;
      return Reshape(s, Sum(s, g, IntVector(s, axes)), IntVector(s, to.dims()));
    };
    return {reduce(gx, plan->x_reduce_axes(), *xs), reduce(gy, plan->y_reduce_axes(), *ys)};
  }
  const Output sx = ShapeOf(s, x), sy = ShapeOf(s, y);
  const Operation args = s.AddOperation("BroadcastGradientArgs", {sx, sy});
  auto reduce = [&](const Output& g, int i, const Output& shape) {
    if (!g.valid()) return g;
    return Reshape(s, Sum(s, g, args.output(i)), shape);
  };
  return {reduce(gx, 0, sx), reduce(gy, 1, sy)};
}

Output KeptShape(const Scope& s, const Output& x, const Output& axes) {
  const auto axis_values = ConstInts(s, axes);
  if (!axis_values || !x.shape.rank_known()) return DynamicKeptShape(s, x, axes);
  const int rank = x.shape.rank();
  const auto mask = ReducedMask(*axis_values, rank);
  if (!mask) return DynamicKeptShape(s, x, axes);
  if (x.shape.IsFullyDefined()) {
    std::vector<int64_t> kept = x.shape.dims();
    for (int d = 0; d < rank; ++d) {
      if ((*mask)[d]) kept[d] = 1;
    }
    return IntVector(s, kept);
  }
  std::vector<int64_t> keep(rank), reduced(rank);
  for (int d = 0; d < rank; ++d) {
    keep[d] = (*mask)[d] ? 0 : 1;
    reduced[d] = 1 - keep[d];
  }
  return Add(s, Mul(s, Op(s, "Shape", {x}), IntVector(s, keep)), IntVector(s, reduced));
}

Output SpreadReduction(const Scope& s, const Output& x, const Output& axes, const Output& dy) {
  const Output kept = KeptShape(s, x, axes);
  const Output dy_kept = Reshape(s, dy, kept);
  const auto kept_values = ConstInts(s, kept);
  const auto x_shape = x.shape.AsTensorShape();
  Output multiples;
  if (kept_values && x_shape) {
    std::vector<int64_t> m(x_shape->rank());
    for (int d = 0; d < x_shape->rank(); ++d) {
      m[d] = (*kept_values)[d] == 0 ? 0 : x_shape->dim(d) / (*kept_values)[d];
    }
    multiples = IntVector(s, m);
  } else {
    // A zero dimension keeps 0, not 1: divide by max(kept, 1) (TensorFlow's
    // safe shape division).
    multiples = Div(s, ShapeOf(s, x), Op(s, "Maximum", {kept, IntScalar(s, 1)}));
  }
  return Op(s, "Tile", {dy_kept, multiples});
}

Status Register(OpRegistry& r, const std::string& op, GradFn fn) {
  return r.RegisterGradient(op, std::move(fn));
}

}  // namespace tfd::kernels::grad
