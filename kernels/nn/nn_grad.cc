// Gradient functions of the nn ops: activations (through their derivative
// ops in activation_grad_ops.cc), softmax, bias and the losses. Each follows
// TensorFlow's nn_grad.py.
#include "kernels/math/grad_util.h"
#include "kernels/nn/nn_internal.h"

namespace tfd::kernels::nn {
namespace {

using namespace grad;  // NOLINT: the helpers are this file's vocabulary

using Dx = std::vector<Output>;

// Derivative ops taking the forward output: Op(y, dy).
template <const char* kOp>
Status FromOutputGrad(Scope& s, const GradInputs& in, Dx* dx) {
  (*dx)[0] = Op(s, kOp, {in.outputs[0], in.dy[0]});
  return OkStatus();
}
// Derivative ops taking the upstream gradient first: Op(dy, features).
template <const char* kOp>
Status FromFeaturesGrad(Scope& s, const GradInputs& in, Dx* dx) {
  (*dx)[0] = Op(s, kOp, {in.dy[0], in.inputs[0]});
  return OkStatus();
}
constexpr char kSigmoidGrad[] = "SigmoidGrad";
constexpr char kTanhGrad[] = "TanhGrad";
constexpr char kReluGrad[] = "ReluGrad";
constexpr char kRelu6Grad[] = "Relu6Grad";
constexpr char kSoftplusGrad[] = "SoftplusGrad";

Status EluGrad(Scope& s, const GradInputs& in, Dx* dx) {
  (*dx)[0] = Op(s, "EluGrad", {in.dy[0], in.outputs[0]});
  return OkStatus();
}

// Sum over the last axis, kept: what softmax gradients subtract per row.
Output RowSum(const Scope& s, const Output& x) { return Sum(s, x, IntScalar(s, -1), true); }

Status SoftmaxGrad(Scope& s, const GradInputs& in, Dx* dx) {
  const Output &y = in.outputs[0], &dy = in.dy[0];
  (*dx)[0] = Mul(s, Sub(s, dy, RowSum(s, Mul(s, dy, y))), y);
  return OkStatus();
}

Status LogSoftmaxGrad(Scope& s, const GradInputs& in, Dx* dx) {
  const Output &y = in.outputs[0], &dy = in.dy[0];
  (*dx)[0] = Sub(s, dy, Mul(s, RowSum(s, dy), Op(s, "Exp", {y})));
  return OkStatus();
}

Status BiasAddGrad(Scope& s, const GradInputs& in, Dx* dx) {
  TFD_ASSIGN_OR_RETURN(std::string format, in.GetAttr<std::string>("data_format"));
  (*dx)[0] = in.dy[0];
  (*dx)[1] = Op(s, "BiasAddGrad", {in.dy[0]}, {{"data_format", format}});
  return OkStatus();
}

Status L2LossGrad(Scope& s, const GradInputs& in, Dx* dx) {
  (*dx)[0] = Mul(s, in.inputs[0], in.dy[0]);
  return OkStatus();
}

// Both cross-entropy ops: the loss's gradient for the logits is the
// backprop output they already computed, scaled per row by dloss.
Status XentGrad(Scope& s, const GradInputs& in, Dx* dx, bool dense) {
  if (in.dy[1].valid()) {
    return errors::InvalidArgument("differentiating through output 1 (backprop) of ", in.node.op,
                                   " is not supported; differentiate the loss (output 0)");
  }
  const Output dloss = Op(s, "ExpandDims", {in.dy[0], IntScalar(s, -1)});
  (*dx)[0] = Mul(s, dloss, in.outputs[1]);
  if (dense) {
    // d(-sum(labels * log_softmax(features)))/dlabels = -log_softmax(features).
    (*dx)[1] = Mul(s, dloss, Neg(s, Op(s, "LogSoftmax", {in.inputs[0]})));
  }
  return OkStatus();
}

Status SoftmaxXentGrad(Scope& s, const GradInputs& in, Dx* dx) {
  return XentGrad(s, in, dx, /*dense=*/true);
}
Status SparseSoftmaxXentGrad(Scope& s, const GradInputs& in, Dx* dx) {
  return XentGrad(s, in, dx, /*dense=*/false);
}

}  // namespace

Status RegisterNnGradients(OpRegistry& r) {
  const std::pair<const char*, GradFn> table[] = {
      {"Sigmoid", FromOutputGrad<kSigmoidGrad>},
      {"Tanh", FromOutputGrad<kTanhGrad>},
      {"Relu", FromFeaturesGrad<kReluGrad>},
      {"Relu6", FromFeaturesGrad<kRelu6Grad>},
      {"Softplus", FromFeaturesGrad<kSoftplusGrad>},
      {"Elu", EluGrad},
      {"Softmax", SoftmaxGrad},
      {"LogSoftmax", LogSoftmaxGrad},
      {"BiasAdd", BiasAddGrad},
      {"L2Loss", L2LossGrad},
      {"SoftmaxCrossEntropyWithLogits", SoftmaxXentGrad},
      {"SparseSoftmaxCrossEntropyWithLogits", SparseSoftmaxXentGrad},
  };
  for (const auto& [op, fn] : table) TFD_RETURN_IF_ERROR(grad::Register(r, op, fn));
  return OkStatus();
}

}  // namespace tfd::kernels::nn
