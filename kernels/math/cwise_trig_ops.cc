// Element-wise transcendental ops of libm: Sin, Cos, Tan, Asin, Acos, Atan,
// Sinh, Cosh, Asinh, Acosh, Atanh and Erf, on float32 and float64.
//
// Each is the C library's function element by element, float32 evaluated in
// double and rounded once, so a float32 result is the correctly rounded one
// but for the rare double rounding: within an ulp of the exact value where
// Eigen's packet sin/cos lose accuracy for large arguments. inf, NaN, signed
// zeros and denormals come out as numpy's (sin(-0) = -0, asin(2) = NaN,
// atanh(1) = inf, erf(inf) = 1).
#include <cmath>
#include <utility>
#include <vector>

#include "kernels/math/cwise_unary_kernel.h"
#include "kernels/math/grad_util.h"
#include "kernels/math/math_ops_internal.h"

namespace tfd::kernels {
namespace {

#define TFD_LIBM_FN(NAME, FN)                                                      \
  TFD_UNARY_FN(NAME, Domain::kFloat,                                               \
               a.unaryExpr([](S v) { return static_cast<S>(FN(static_cast<double>(v))); }))

TFD_LIBM_FN(SinFn, std::sin)
TFD_LIBM_FN(CosFn, std::cos)
TFD_LIBM_FN(TanFn, std::tan)
TFD_LIBM_FN(AsinFn, std::asin)
TFD_LIBM_FN(AcosFn, std::acos)
TFD_LIBM_FN(AtanFn, std::atan)
TFD_LIBM_FN(SinhFn, std::sinh)
TFD_LIBM_FN(CoshFn, std::cosh)
TFD_LIBM_FN(AsinhFn, std::asinh)
TFD_LIBM_FN(AcoshFn, std::acosh)
TFD_LIBM_FN(AtanhFn, std::atanh)
TFD_LIBM_FN(ErfFn, std::erf)
#undef TFD_LIBM_FN
#undef TFD_UNARY_FN

// --- Gradients, as TensorFlow's math_grad.py builds them. ---

using namespace grad;  // NOLINT: the helpers are the gradients' vocabulary
using Dx = std::vector<Output>;

Output Unary(const Scope& s, const char* op, const Output& x) { return Op(s, op, {x}); }
Output Recip(const Scope& s, const Output& x) { return Unary(s, "Reciprocal", x); }
Output Sq(const Scope& s, const Output& x) { return Unary(s, "Square", x); }
// 1 - x^2 and 1 + x^2, the arc functions' denominators.
Output OneMinusSq(const Scope& s, const Output& x) { return Sub(s, ScalarLike(s, 1, x), Sq(s, x)); }
Output OnePlusSq(const Scope& s, const Output& x) { return Add(s, ScalarLike(s, 1, x), Sq(s, x)); }

// dx = dy * f'(x), f' given as a graph of x (or of the output y).
template <Output (*kDerivative)(const Scope&, const GradInputs&)>
Status ChainGrad(Scope& s, const GradInputs& in, Dx* dx) {
  (*dx)[0] = Mul(s, in.dy[0], kDerivative(s, in));
  return OkStatus();
}

Output DSin(const Scope& s, const GradInputs& in) { return Unary(s, "Cos", in.inputs[0]); }
Output DCos(const Scope& s, const GradInputs& in) { return Neg(s, Unary(s, "Sin", in.inputs[0])); }
Output DTan(const Scope& s, const GradInputs& in) {  // sec^2 x
  return Sq(s, Recip(s, Unary(s, "Cos", in.inputs[0])));
}
Output DAsin(const Scope& s, const GradInputs& in) {
  return Recip(s, Unary(s, "Sqrt", OneMinusSq(s, in.inputs[0])));
}
Output DAcos(const Scope& s, const GradInputs& in) { return Neg(s, DAsin(s, in)); }
Output DAtan(const Scope& s, const GradInputs& in) { return Recip(s, OnePlusSq(s, in.inputs[0])); }
Output DSinh(const Scope& s, const GradInputs& in) { return Unary(s, "Cosh", in.inputs[0]); }
Output DCosh(const Scope& s, const GradInputs& in) { return Unary(s, "Sinh", in.inputs[0]); }
// asinh' = 1 / cosh(asinh x), acosh' = 1 / sinh(acosh x): from the output.
Output DAsinh(const Scope& s, const GradInputs& in) {
  return Recip(s, Unary(s, "Cosh", in.outputs[0]));
}
Output DAcosh(const Scope& s, const GradInputs& in) {
  return Recip(s, Unary(s, "Sinh", in.outputs[0]));
}
Output DAtanh(const Scope& s, const GradInputs& in) {
  return Recip(s, OneMinusSq(s, in.inputs[0]));
}
Output DErf(const Scope& s, const GradInputs& in) {  // 2 / sqrt(pi) * e^(-x^2)
  const Output& x = in.inputs[0];
  return Mul(s, ScalarLike(s, 1.12837916709551257389615890312154517, x),
             Unary(s, "Exp", Neg(s, Sq(s, x))));
}

}  // namespace

Status RegisterTrigOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(AddUnary<SinFn>(r, "Sin", "sin(x) element-wise, x in radians."));
  TFD_RETURN_IF_ERROR(AddUnary<CosFn>(r, "Cos", "cos(x) element-wise, x in radians."));
  TFD_RETURN_IF_ERROR(AddUnary<TanFn>(r, "Tan", "tan(x) element-wise, x in radians."));
  TFD_RETURN_IF_ERROR(AddUnary<AsinFn>(
      r, "Asin", "arcsin(x) element-wise, in [-pi/2, pi/2]; NaN outside [-1, 1]."));
  TFD_RETURN_IF_ERROR(
      AddUnary<AcosFn>(r, "Acos", "arccos(x) element-wise, in [0, pi]; NaN outside [-1, 1]."));
  TFD_RETURN_IF_ERROR(AddUnary<AtanFn>(r, "Atan", "arctan(x) element-wise, in [-pi/2, pi/2]."));
  TFD_RETURN_IF_ERROR(AddUnary<SinhFn>(r, "Sinh", "The hyperbolic sine of x element-wise."));
  TFD_RETURN_IF_ERROR(AddUnary<CoshFn>(r, "Cosh", "The hyperbolic cosine of x element-wise."));
  TFD_RETURN_IF_ERROR(
      AddUnary<AsinhFn>(r, "Asinh", "The inverse hyperbolic sine of x element-wise."));
  TFD_RETURN_IF_ERROR(AddUnary<AcoshFn>(
      r, "Acosh", "The inverse hyperbolic cosine of x element-wise; NaN below 1."));
  TFD_RETURN_IF_ERROR(AddUnary<AtanhFn>(
      r, "Atanh",
      "The inverse hyperbolic tangent of x element-wise; +-inf at +-1, NaN outside [-1, 1]."));
  TFD_RETURN_IF_ERROR(AddUnary<ErfFn>(r, "Erf", "The Gauss error function of x element-wise."));
  const std::pair<const char*, GradFn> gradients[] = {
      {"Sin", ChainGrad<DSin>},     {"Cos", ChainGrad<DCos>},     {"Tan", ChainGrad<DTan>},
      {"Asin", ChainGrad<DAsin>},   {"Acos", ChainGrad<DAcos>},   {"Atan", ChainGrad<DAtan>},
      {"Sinh", ChainGrad<DSinh>},   {"Cosh", ChainGrad<DCosh>},   {"Asinh", ChainGrad<DAsinh>},
      {"Acosh", ChainGrad<DAcosh>}, {"Atanh", ChainGrad<DAtanh>}, {"Erf", ChainGrad<DErf>},
  };
  for (const auto& [op, fn] : gradients) TFD_RETURN_IF_ERROR(grad::Register(r, op, fn));
  return OkStatus();
}

}  // namespace tfd::kernels
