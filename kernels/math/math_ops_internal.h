// Private to the math family: one Register function per source file, called
// in turn by RegisterMathOps (math_ops.cc).
#pragma once

#include "common/op_registry.h"

namespace tfd::kernels {

Status RegisterBinaryOps(OpRegistry& r);        // cwise_binary_ops.cc
Status RegisterComparisonOps(OpRegistry& r);    // cwise_compare_ops.cc
Status RegisterUnaryOps(OpRegistry& r);         // cwise_unary_ops.cc
Status RegisterSelectOp(OpRegistry& r);         // select_op.cc
Status RegisterAddNOp(OpRegistry& r);           // add_n_op.cc
Status RegisterMatMulOp(OpRegistry& r);         // matmul_op.cc
Status RegisterReductionOps(OpRegistry& r);     // reduction_ops.cc
Status RegisterArgMinMaxOps(OpRegistry& r);     // argminmax_op.cc
Status RegisterMathGradOps(OpRegistry& r);      // math_grad_ops.cc
Status RegisterModOps(OpRegistry& r);           // cwise_mod_ops.cc: with gradients
Status RegisterTrigOps(OpRegistry& r);          // cwise_trig_ops.cc: with gradients
Status RegisterFloatClassOps(OpRegistry& r);    // cwise_float_class_ops.cc: with gradients
Status RegisterRangeOp(OpRegistry& r);          // range_op.cc
Status RegisterCumsumOp(OpRegistry& r);         // cumsum_op.cc: with its gradient
Status RegisterBatchMatMulOps(OpRegistry& r);   // batch_matmul_op.cc: with gradients
Status RegisterTopKOp(OpRegistry& r);           // topk_op.cc: with its gradient
Status RegisterAucOp(OpRegistry& r);            // auc_op.cc: no gradient
Status RegisterMathGradients(OpRegistry& r);    // math_grad.cc: gradient functions

}  // namespace tfd::kernels
