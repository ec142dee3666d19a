// Element-wise unary ops: Neg, Square, Sqrt, Rsqrt, Exp, Log, Abs,
// LogicalNot, Reciprocal, Sign, Floor. Each is one Eigen array expression;
// where Eigen's stock form is not IEEE, with a functor of ieee_functors.h.
#include "kernels/math/cwise_unary_kernel.h"
#include "kernels/math/ieee_functors.h"
#include "kernels/math/math_ops_internal.h"

namespace tfd::kernels {
namespace {

TFD_UNARY_FN(NegFn, Domain::kSigned, a.unaryExpr(ieee::NegOp<S>()))
TFD_UNARY_FN(SquareFn, Domain::kSigned, a.square())
TFD_UNARY_FN(SqrtFn, Domain::kFloat, a.unaryExpr(ieee::SqrtOp<S>()))
TFD_UNARY_FN(RsqrtFn, Domain::kFloat, a.unaryExpr(ieee::RsqrtOp<S>()))
TFD_UNARY_FN(ExpFn, Domain::kFloat, a.unaryExpr(ieee::ExpOp<S>()))
TFD_UNARY_FN(LogFn, Domain::kFloat, a.unaryExpr(ieee::LogOp<S>()))
TFD_UNARY_FN(AbsFn, Domain::kSigned, a.abs())
TFD_UNARY_FN(LogicalNotFn, Domain::kBool, !a)
TFD_UNARY_FN(ReciprocalFn, Domain::kFloat, a.inverse())
TFD_UNARY_FN(SignFn, Domain::kSigned, a.sign())
TFD_UNARY_FN(FloorFn, Domain::kFloat, a.floor())
#undef TFD_UNARY_FN

}  // namespace

Status RegisterUnaryOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(AddUnary<NegFn>(r, "Neg", "-x element-wise."));
  TFD_RETURN_IF_ERROR(AddUnary<SquareFn>(r, "Square", "x * x element-wise."));
  TFD_RETURN_IF_ERROR(AddUnary<SqrtFn>(r, "Sqrt", "The square root of x element-wise."));
  TFD_RETURN_IF_ERROR(AddUnary<RsqrtFn>(r, "Rsqrt", "1 / sqrt(x) element-wise."));
  TFD_RETURN_IF_ERROR(AddUnary<ExpFn>(r, "Exp", "e^x element-wise."));
  TFD_RETURN_IF_ERROR(AddUnary<LogFn>(r, "Log", "The natural logarithm of x element-wise."));
  TFD_RETURN_IF_ERROR(AddUnary<AbsFn>(r, "Abs", "|x| element-wise."));
  TFD_RETURN_IF_ERROR(AddUnary<LogicalNotFn>(r, "LogicalNot", "NOT x element-wise."));
  TFD_RETURN_IF_ERROR(AddUnary<ReciprocalFn>(r, "Reciprocal", "1 / x element-wise."));
  TFD_RETURN_IF_ERROR(
      AddUnary<SignFn>(r, "Sign", "-1, 0 or 1 by the sign of x element-wise."));
  TFD_RETURN_IF_ERROR(
      AddUnary<FloorFn>(r, "Floor", "The largest integer not greater than x, element-wise."));
  return OkStatus();
}

}  // namespace tfd::kernels
