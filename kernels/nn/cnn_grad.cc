// Gradient functions of the convnet ops: convolutions (and the first
// derivatives of Conv2D, so that it can be differentiated twice), pooling,
// batch normalization and LRN. Each follows TensorFlow's nn_grad.py; the
// gradient ops take the forward node's attrs (strides, padding, ...)
// unchanged, as they declare the same ones.
#include "kernels/math/grad_util.h"
#include "kernels/nn/nn_internal.h"

namespace tfd::kernels::nn {
namespace {

using namespace grad;  // NOLINT: the helpers are this file's vocabulary

using Dx = std::vector<Output>;

// Conv2D / DepthwiseConv2dNative: (input, filter) -> (d input, d filter).
template <const char* kInputGrad, const char* kFilterGrad>
Status ConvGrad(Scope& s, const GradInputs& in, Dx* dx) {
  const Output &x = in.inputs[0], &filter = in.inputs[1], &dy = in.dy[0];
  (*dx)[0] = Op(s, kInputGrad, {ShapeOf(s, x), filter, dy}, in.node.attrs);
  (*dx)[1] = Op(s, kFilterGrad, {x, ShapeOf(s, filter), dy}, in.node.attrs);
  return OkStatus();
}
constexpr char kConvInputGrad[] = "Conv2DBackpropInput";
constexpr char kConvFilterGrad[] = "Conv2DBackpropFilter";
constexpr char kDepthwiseInputGrad[] = "DepthwiseConv2dNativeBackpropInput";
constexpr char kDepthwiseFilterGrad[] = "DepthwiseConv2dNativeBackpropFilter";

// Conv2DBackpropInput(input_sizes, filter, out_backprop) is linear in
// filter and out_backprop.
Status ConvBackpropInputGrad(Scope& s, const GradInputs& in, Dx* dx) {
  const Output &filter = in.inputs[1], &out_backprop = in.inputs[2], &dy = in.dy[0];
  (*dx)[1] = Op(s, kConvFilterGrad, {dy, ShapeOf(s, filter), out_backprop}, in.node.attrs);
  (*dx)[2] = Op(s, "Conv2D", {dy, filter}, in.node.attrs);
  return OkStatus();
}

// Conv2DBackpropFilter(input, filter_sizes, out_backprop) is linear in
// input and out_backprop.
Status ConvBackpropFilterGrad(Scope& s, const GradInputs& in, Dx* dx) {
  const Output &x = in.inputs[0], &out_backprop = in.inputs[2], &dy = in.dy[0];
  (*dx)[0] = Op(s, kConvInputGrad, {ShapeOf(s, x), dy, out_backprop}, in.node.attrs);
  (*dx)[2] = Op(s, "Conv2D", {x, dy}, in.node.attrs);
  return OkStatus();
}

Status MaxPoolGrad(Scope& s, const GradInputs& in, Dx* dx) {
  (*dx)[0] = Op(s, "MaxPoolGrad", {in.inputs[0], in.outputs[0], in.dy[0]}, in.node.attrs);
  return OkStatus();
}

Status AvgPoolGrad(Scope& s, const GradInputs& in, Dx* dx) {
  (*dx)[0] = Op(s, "AvgPoolGrad", {ShapeOf(s, in.inputs[0]), in.dy[0]}, in.node.attrs);
  return OkStatus();
}

// AvgPoolGrad is linear in grad: its gradient is the pooling of dy.
Status AvgPoolGradGrad(Scope& s, const GradInputs& in, Dx* dx) {
  (*dx)[1] = Op(s, "AvgPool", {in.dy[0]}, in.node.attrs);
  return OkStatus();
}

// y's gradient for x, scale and offset; none for the mean and variance
// inputs (in training they are not read; in inference they are constants
// of the model, as in TensorFlow).
Status FusedBatchNormGrad(Scope& s, const GradInputs& in, Dx* dx) {
  for (int i = 1; i < 5; ++i) {
    if (in.dy[i].valid()) {
      return errors::InvalidArgument("differentiating through output ", i,
                                     " of FusedBatchNorm (its statistics) is not supported; "
                                     "differentiate y (output 0)");
    }
  }
  if (!in.dy[0].valid()) return OkStatus();
  TFD_ASSIGN_OR_RETURN(bool training, in.GetAttr<bool>("is_training"));
  // What the forward normalized with: the batch's statistics in training,
  // the given ones in inference.
  const Output& mean = training ? in.outputs[3] : in.inputs[3];
  const Output& var = training ? in.outputs[4] : in.inputs[4];
  AttrMap attrs = in.node.attrs;
  attrs.erase("exponential_avg_factor");
  const std::vector<Output> g = s.AddOp(
      "FusedBatchNormGrad", {in.dy[0], in.inputs[0], in.inputs[1], mean, var}, attrs);
  if (g.size() < 3) return s.status();
  for (int i = 0; i < 3; ++i) (*dx)[i] = g[i];
  return OkStatus();
}

Status LrnGrad(Scope& s, const GradInputs& in, Dx* dx) {
  (*dx)[0] = Op(s, "LRNGrad", {in.dy[0], in.inputs[0], in.outputs[0]}, in.node.attrs);
  return OkStatus();
}

}  // namespace

Status RegisterCnnGradients(OpRegistry& r) {
  const std::pair<const char*, GradFn> table[] = {
      {"Conv2D", ConvGrad<kConvInputGrad, kConvFilterGrad>},
      {"Conv2DBackpropInput", ConvBackpropInputGrad},
      {"Conv2DBackpropFilter", ConvBackpropFilterGrad},
      {"DepthwiseConv2dNative", ConvGrad<kDepthwiseInputGrad, kDepthwiseFilterGrad>},
      {"MaxPool", MaxPoolGrad},
      {"AvgPool", AvgPoolGrad},
      {"AvgPoolGrad", AvgPoolGradGrad},
      {"FusedBatchNorm", FusedBatchNormGrad},
      {"LRN", LrnGrad},
  };
  for (const auto& [op, fn] : table) TFD_RETURN_IF_ERROR(grad::Register(r, op, fn));
  return OkStatus();
}

}  // namespace tfd::kernels::nn
