// The nn family's entry point: registers each sub-family's ops, and holds
// the small helpers they share.
#include "kernels/nn/nn_ops.h"

#include "kernels/nn/nn_internal.h"

namespace tfd::kernels {

Status RegisterNnOps(OpRegistry& registry) {
  TFD_RETURN_IF_ERROR(nn::RegisterActivationOps(registry));
  TFD_RETURN_IF_ERROR(nn::RegisterActivationGradOps(registry));
  TFD_RETURN_IF_ERROR(nn::RegisterSoftmaxOps(registry));
  TFD_RETURN_IF_ERROR(nn::RegisterBiasOps(registry));
  TFD_RETURN_IF_ERROR(nn::RegisterLossOps(registry));
  TFD_RETURN_IF_ERROR(nn::RegisterInTopKOps(registry));
  TFD_RETURN_IF_ERROR(nn::RegisterConvOps(registry));
  TFD_RETURN_IF_ERROR(nn::RegisterDepthwiseConvOps(registry));
  TFD_RETURN_IF_ERROR(nn::RegisterPoolingOps(registry));
  TFD_RETURN_IF_ERROR(nn::RegisterBatchNormOps(registry));
  TFD_RETURN_IF_ERROR(nn::RegisterLrnOps(registry));
  TFD_RETURN_IF_ERROR(nn::RegisterLeakySeluOps(registry));
  // Gradients after the ops they differentiate.
  TFD_RETURN_IF_ERROR(nn::RegisterNnGradients(registry));
  TFD_RETURN_IF_ERROR(nn::RegisterCnnGradients(registry));
  return OkStatus();
}

namespace nn {

Status MergedInputsShape(InferenceContext& c) {
  auto merged = c.input(0).Merge(c.input(1));
  if (!merged.ok()) {
    return errors::InvalidArgument("inputs 0 and 1 must have the same shape, got ",
                                   c.input(0).ToString(), " and ", c.input(1).ToString());
  }
  c.set_output(0, std::move(merged).value());
  return OkStatus();
}

Status UnsupportedDType(const Tensor& t) {
  return errors::InvalidArgument("expected a float32 or float64 tensor, got ", t.Describe());
}

}  // namespace nn
}  // namespace tfd::kernels
