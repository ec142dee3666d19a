// Gradient functions of the math ops: element-wise unary and binary ops
// (binary ones undo their broadcast), AddN, MatMul, the reductions and
// Select. Each follows TensorFlow's math_grad.py; the derivative ops
// (SqrtGrad, ...) live in math_grad_ops.cc.
#include <algorithm>
#include <tuple>

#include "kernels/math/grad_util.h"
#include "kernels/math/math_ops_internal.h"

namespace tfd::kernels {
namespace {

using namespace grad;  // NOLINT: the helpers are this file's vocabulary

using Dx = std::vector<Output>;

// --- Broadcasting binary ops: gradients shaped like z, then reduced. ---

Status AddGrad(Scope& s, const GradInputs& in, Dx* dx) {
  std::tie((*dx)[0], (*dx)[1]) = SumBroadcast(s, in.inputs[0], in.inputs[1], in.dy[0], in.dy[0]);
  return OkStatus();
}

Status SubGrad(Scope& s, const GradInputs& in, Dx* dx) {
  std::tie((*dx)[0], (*dx)[1]) =
      SumBroadcast(s, in.inputs[0], in.inputs[1], in.dy[0], Neg(s, in.dy[0]));
  return OkStatus();
}

Status MulGrad(Scope& s, const GradInputs& in, Dx* dx) {
  const Output &x = in.inputs[0], &y = in.inputs[1], &dz = in.dy[0];
  std::tie((*dx)[0], (*dx)[1]) = SumBroadcast(s, x, y, Mul(s, dz, y), Mul(s, x, dz));
  return OkStatus();
}

Status DivGrad(Scope& s, const GradInputs& in, Dx* dx) {
  const Output &x = in.inputs[0], &y = in.inputs[1], &dz = in.dy[0];
  // d(x/y)/dy = -x / y^2
  const Output gy = Mul(s, dz, Neg(s, Div(s, Div(s, x, y), y)));
  std::tie((*dx)[0], (*dx)[1]) = SumBroadcast(s, x, y, Div(s, dz, y), gy);
  return OkStatus();
}

// Maximum and Minimum: the gradient goes to whichever input was chosen (x
// on ties, as TensorFlow).
Status SelectedGrad(Scope& s, const GradInputs& in, Dx* dx, const char* x_wins) {
  const Output &x = in.inputs[0], &y = in.inputs[1], &dz = in.dy[0];
  const Output gx = Mul(s, dz, Cast(s, Op(s, x_wins, {x, y}), dz.dtype));
  std::tie((*dx)[0], (*dx)[1]) = SumBroadcast(s, x, y, gx, Sub(s, dz, gx));
  return OkStatus();
}

Status MaximumGrad(Scope& s, const GradInputs& in, Dx* dx) {
  return SelectedGrad(s, in, dx, "GreaterEqual");
}
Status MinimumGrad(Scope& s, const GradInputs& in, Dx* dx) {
  return SelectedGrad(s, in, dx, "LessEqual");
}

Status PowGrad(Scope& s, const GradInputs& in, Dx* dx) {
  const Output &x = in.inputs[0], &y = in.inputs[1], &z = in.outputs[0], &dz = in.dy[0];
  // dz/dx = y * x^(y-1); dz/dy = z * log(x), taken as 0 where x <= 0.
  const Output gx = Mul(s, dz, Mul(s, y, Op(s, "Pow", {x, Sub(s, y, ScalarLike(s, 1, y))})));
  const Output positive = Op(s, "Greater", {x, ScalarLike(s, 0, x)});
  const Output log_x = Op(s, "Select", {positive, Op(s, "Log", {x}), ZerosLike(s, x)});
  const Output gy = Mul(s, dz, Mul(s, z, log_x));
  std::tie((*dx)[0], (*dx)[1]) = SumBroadcast(s, x, y, gx, gy);
  return OkStatus();
}

Status SquaredDifferenceGrad(Scope& s, const GradInputs& in, Dx* dx) {
  const Output &x = in.inputs[0], &y = in.inputs[1], &dz = in.dy[0];
  const Output gx = Mul(s, dz, Mul(s, ScalarLike(s, 2, dz), Sub(s, x, y)));
  std::tie((*dx)[0], (*dx)[1]) = SumBroadcast(s, x, y, gx, Neg(s, gx));
  return OkStatus();
}

// --- Unary ops. ---

Status NegGrad(Scope& s, const GradInputs& in, Dx* dx) {
  (*dx)[0] = Neg(s, in.dy[0]);
  return OkStatus();
}

Status SquareGrad(Scope& s, const GradInputs& in, Dx* dx) {
  (*dx)[0] = Mul(s, in.dy[0], Mul(s, ScalarLike(s, 2, in.inputs[0]), in.inputs[0]));
  return OkStatus();
}

// Ops whose derivative op takes the forward output y: Op(y, dy).
template <const char* kOp>
Status FromOutputGrad(Scope& s, const GradInputs& in, Dx* dx) {
  (*dx)[0] = Op(s, kOp, {in.outputs[0], in.dy[0]});
  return OkStatus();
}
constexpr char kSqrtGrad[] = "SqrtGrad";
constexpr char kRsqrtGrad[] = "RsqrtGrad";
constexpr char kReciprocalGrad[] = "ReciprocalGrad";

Status ExpGrad(Scope& s, const GradInputs& in, Dx* dx) {
  (*dx)[0] = Mul(s, in.dy[0], in.outputs[0]);
  return OkStatus();
}

Status LogGrad(Scope& s, const GradInputs& in, Dx* dx) {
  (*dx)[0] = Div(s, in.dy[0], in.inputs[0]);
  return OkStatus();
}

Status AbsGrad(Scope& s, const GradInputs& in, Dx* dx) {
  (*dx)[0] = Mul(s, in.dy[0], Op(s, "Sign", {in.inputs[0]}));
  return OkStatus();
}

// Piecewise-constant ops (Sign, Floor) and ops whose value does not depend
// on their input's values (ZerosLike, OnesLike): no gradient flows back.
Status NoGradient(Scope&, const GradInputs&, Dx*) { return OkStatus(); }

// --- AddN, MatMul, Select. ---

Status AddNGrad(Scope&, const GradInputs& in, Dx* dx) {
  for (Output& d : *dx) d = in.dy[0];
  return OkStatus();
}

Status MatMulGrad(Scope& s, const GradInputs& in, Dx* dx) {
  TFD_ASSIGN_OR_RETURN(bool ta, in.GetAttr<bool>("transpose_a"));
  TFD_ASSIGN_OR_RETURN(bool tb, in.GetAttr<bool>("transpose_b"));
  const Output &a = in.inputs[0], &b = in.inputs[1], &dz = in.dy[0];
  auto matmul = [&](const Output& p, const Output& q, bool tp, bool tq) {
    return Op(s, "MatMul", {p, q}, {{"transpose_a", tp}, {"transpose_b", tq}});
  };
  if (!ta && !tb) {
    (*dx)[0] = matmul(dz, b, false, true);
    (*dx)[1] = matmul(a, dz, true, false);
  } else if (!ta && tb) {
    (*dx)[0] = matmul(dz, b, false, false);
    (*dx)[1] = matmul(dz, a, true, false);
  } else if (ta && !tb) {
    (*dx)[0] = matmul(b, dz, false, true);
    (*dx)[1] = matmul(a, dz, false, false);
  } else {
    (*dx)[0] = matmul(b, dz, true, true);
    (*dx)[1] = matmul(dz, a, true, true);
  }
  return OkStatus();
}

Status SelectGrad(Scope& s, const GradInputs& in, Dx* dx) {
  const Output &cond = in.inputs[0], &dz = in.dy[0];
  const Output zeros = ZerosLike(s, dz);
  (*dx)[1] = Op(s, "Select", {cond, dz, zeros});
  (*dx)[2] = Op(s, "Select", {cond, zeros, dz});
  return OkStatus();
}

// --- Reductions: inputs (input, reduction_indices). ---

Status SumGrad(Scope& s, const GradInputs& in, Dx* dx) {
  (*dx)[0] = SpreadReduction(s, in.inputs[0], in.inputs[1], in.dy[0]);
  return OkStatus();
}

Status MeanGrad(Scope& s, const GradInputs& in, Dx* dx) {
  const Output &x = in.inputs[0], &y = in.outputs[0];
  Output count;
  if (x.shape.IsFullyDefined() && y.shape.IsFullyDefined()) {
    const int64_t ny = std::max<int64_t>(y.shape.num_elements(), 1);
    count = ScalarLike(s, static_cast<double>(x.shape.num_elements() / ny), x);
  } else {
    const Output ny = Op(s, "Maximum", {Op(s, "Size", {y}), IntScalar(s, 1)});
    count = Cast(s, Div(s, Op(s, "Size", {x}), ny), x.dtype);
  }
  (*dx)[0] = Div(s, SpreadReduction(s, x, in.inputs[1], in.dy[0]), count);
  return OkStatus();
}

// Max and Min: the gradient is shared equally among the elements equal to
// the extreme (TensorFlow's rule).
Status ExtremumGrad(Scope& s, const GradInputs& in, Dx* dx) {
  const Output &x = in.inputs[0], &axes = in.inputs[1], &y = in.outputs[0];
  const Output kept = KeptShape(s, x, axes);
  const Output hits = Cast(s, Op(s, "Equal", {x, Reshape(s, y, kept)}), x.dtype);
  const Output share = Div(s, hits, Sum(s, hits, axes, /*keep_dims=*/true));
  (*dx)[0] = Mul(s, share, Reshape(s, in.dy[0], kept));
  return OkStatus();
}

// Prod: d(prod)/dx_i = prod / x_i, valid for nonzero inputs.
Status ProdGrad(Scope& s, const GradInputs& in, Dx* dx) {
  const Output &x = in.inputs[0], &axes = in.inputs[1];
  const Output kept = KeptShape(s, x, axes);
  const Output spread = Mul(s, Reshape(s, in.dy[0], kept), Reshape(s, in.outputs[0], kept));
  (*dx)[0] = Div(s, spread, x);
  return OkStatus();
}

}  // namespace

Status RegisterMathGradients(OpRegistry& r) {
  const std::pair<const char*, GradFn> table[] = {
      {"Add", AddGrad},
      {"Sub", SubGrad},
      {"Mul", MulGrad},
      {"Div", DivGrad},
      {"Maximum", MaximumGrad},
      {"Minimum", MinimumGrad},
      {"Pow", PowGrad},
      {"SquaredDifference", SquaredDifferenceGrad},
      {"Neg", NegGrad},
      {"Square", SquareGrad},
      {"Sqrt", FromOutputGrad<kSqrtGrad>},
      {"Rsqrt", FromOutputGrad<kRsqrtGrad>},
      {"Reciprocal", FromOutputGrad<kReciprocalGrad>},
      {"Exp", ExpGrad},
      {"Log", LogGrad},
      {"Abs", AbsGrad},
      {"Sign", NoGradient},
      {"Floor", NoGradient},
      {"Range", NoGradient},  // TF1's: a range of float bounds passes them none
      {"AddN", AddNGrad},
      {"MatMul", MatMulGrad},
      {"Select", SelectGrad},
      {"Sum", SumGrad},
      {"Mean", MeanGrad},
      {"Max", ExtremumGrad},
      {"Min", ExtremumGrad},
      {"Prod", ProdGrad},
  };
  for (const auto& [op, fn] : table) TFD_RETURN_IF_ERROR(grad::Register(r, op, fn));
  return OkStatus();
}

}  // namespace tfd::kernels
