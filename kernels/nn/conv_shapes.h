// Shape functions of the 2-D windowed ops (Conv2D, DepthwiseConv2dNative,
// MaxPool, AvgPool and their gradients), and the kernel-time checks they
// share. The output sizes follow window_geometry.h; a gradient op's
// out_backprop (grad) must have the shape the forward op would give, which
// is checked as far as the shapes are known.
//
//   TFD_RETURN_IF_ERROR(r.Add<Conv2DOp>(def, ConvShape));
//
// Thread-safety: pure functions.
#pragma once

#include <array>

#include "common/shape_inference.h"
#include "common/tensor.h"
#include "kernels/nn/window_geometry.h"

namespace tfd::kernels::nn {

// Conv2D (input, filter) and its gradients (input_sizes, filter,
// out_backprop) / (input, filter_sizes, out_backprop).
Status ConvShape(InferenceContext& c);
Status BackpropInputShape(InferenceContext& c);
Status BackpropFilterShape(InferenceContext& c);
// The same for DepthwiseConv2dNative, whose output depth is depth * multiplier.
Status DepthwiseShape(InferenceContext& c);
Status DepthwiseBackpropInputShape(InferenceContext& c);
Status DepthwiseBackpropFilterShape(InferenceContext& c);
// MaxPool / AvgPool (input); MaxPoolGrad (orig_input, orig_output, grad);
// AvgPoolGrad (orig_input_shape, grad).
Status PoolShape(InferenceContext& c);
Status MaxPoolGradShape(InferenceContext& c);
Status AvgPoolGradShape(InferenceContext& c);

// The TensorShape of NHWC dims; INVALID_ARGUMENT beyond kMaxTensorElements.
StatusOr<TensorShape> ToShape(const std::array<int64_t, 4>& dims);

// INVALID_ARGUMENT unless `grad` (out_backprop) has the forward output's shape.
Status CheckOutBackprop(const Tensor& grad, const ConvGeometry& g);

}  // namespace tfd::kernels::nn
