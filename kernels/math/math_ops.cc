// The math family's entry point: every math op file registers through here.
#include "kernels/math/math_ops.h"

#include "kernels/math/math_ops_internal.h"

namespace tfd::kernels {

Status RegisterMathOps(OpRegistry& registry) {
  TFD_RETURN_IF_ERROR(RegisterBinaryOps(registry));
  TFD_RETURN_IF_ERROR(RegisterComparisonOps(registry));
  TFD_RETURN_IF_ERROR(RegisterUnaryOps(registry));
  TFD_RETURN_IF_ERROR(RegisterSelectOp(registry));
  TFD_RETURN_IF_ERROR(RegisterAddNOp(registry));
  TFD_RETURN_IF_ERROR(RegisterMatMulOp(registry));
  TFD_RETURN_IF_ERROR(RegisterReductionOps(registry));
  TFD_RETURN_IF_ERROR(RegisterArgMinMaxOps(registry));
  TFD_RETURN_IF_ERROR(RegisterMathGradOps(registry));
  TFD_RETURN_IF_ERROR(RegisterModOps(registry));
  TFD_RETURN_IF_ERROR(RegisterTrigOps(registry));
  TFD_RETURN_IF_ERROR(RegisterFloatClassOps(registry));
  TFD_RETURN_IF_ERROR(RegisterRangeOp(registry));
  TFD_RETURN_IF_ERROR(RegisterCumsumOp(registry));
  TFD_RETURN_IF_ERROR(RegisterBatchMatMulOps(registry));
  TFD_RETURN_IF_ERROR(RegisterTopKOp(registry));
  TFD_RETURN_IF_ERROR(RegisterAucOp(registry));
  TFD_RETURN_IF_ERROR(RegisterMathGradients(registry));  // after the ops they differentiate
  return OkStatus();
}

}  // namespace tfd::kernels
