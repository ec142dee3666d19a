// Private to the nn family: the per-file registration functions that
// RegisterNnOps (nn_ops.cc) calls, and shape rules several files share.
#pragma once

#include "common/op_registry.h"
#include "common/tensor.h"

namespace tfd::kernels::nn {

Status RegisterActivationOps(OpRegistry& registry);      // activation_ops.cc
Status RegisterActivationGradOps(OpRegistry& registry);  // activation_grad_ops.cc
Status RegisterSoftmaxOps(OpRegistry& registry);         // softmax_ops.cc
Status RegisterBiasOps(OpRegistry& registry);            // bias_ops.cc
Status RegisterLossOps(OpRegistry& registry);            // loss_ops.cc
Status RegisterInTopKOps(OpRegistry& registry);          // in_top_k_ops.cc
Status RegisterConvOps(OpRegistry& registry);            // conv_ops.cc
Status RegisterDepthwiseConvOps(OpRegistry& registry);   // depthwise_conv_ops.cc
Status RegisterPoolingOps(OpRegistry& registry);         // pooling_ops.cc
Status RegisterBatchNormOps(OpRegistry& registry);       // batch_norm_ops.cc
Status RegisterLrnOps(OpRegistry& registry);             // lrn_ops.cc
Status RegisterLeakySeluOps(OpRegistry& registry);       // leaky_selu_ops.cc: with gradients
Status RegisterNnGradients(OpRegistry& registry);        // nn_grad.cc: gradient functions
Status RegisterCnnGradients(OpRegistry& registry);       // cnn_grad.cc: the convnet ops'

// The dtypes of the float-only nn ops.
inline constexpr const char* kFloatTypeAttr = "T: {float32, float64}";

// Shape function: output 0 is inputs 0 and 1 merged; they must agree.
Status MergedInputsShape(InferenceContext& c);

// INVALID_ARGUMENT for a tensor whose dtype an nn kernel does not handle
// (reached only when a kernel is run outside the op's declared dtypes).
Status UnsupportedDType(const Tensor& t);

}  // namespace tfd::kernels::nn
