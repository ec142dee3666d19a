// Gradient functions of the TensorArray ops, TF1's tensor_array_grad.py:
// the gradient of an array is another array (TensorArrayGradV3, one per
// tf.gradients call), into which the gradient of each read is written at
// the index read, and from which the gradient of each write is read. The
// gradient of a flow carries the order: a write's gradient reads only after
// the gradients written by what came after it in the forward pass, which is
// how dynamic_rnn's outputs send their gradients into its loop.
#include "kernels/data_flow/data_flow_ops_internal.h"
#include "kernels/math/grad_util.h"

namespace tfd::kernels::data_flow {
namespace {

using grad::Op;
using Dx = std::vector<Output>;

// The gradients a node's gradient belongs to: its scope's name up to the
// first component named "gradients..." (TF1's _GetGradSource), so that a
// loop's body gradient, built under the same call's prefix, finds the same
// gradient array, and two calls of tf.gradients find two.
std::string GradSource(const Scope& s) {
  const std::string& prefix = s.name_prefix();
  size_t begin = 0;
  while (begin <= prefix.size()) {
    size_t end = prefix.find('/', begin);
    if (end == std::string::npos) end = prefix.size();
    if (prefix.compare(begin, 9, "gradients") == 0) return prefix.substr(0, end);
    begin = end + 1;
  }
  return "gradients";
}

// The gradient array of the array `handle`, after `flow`: {handle, flow}.
Operation GradArray(const Scope& s, const Output& handle, const Output& flow) {
  return s.AddOperation("TensorArrayGradV3", {handle, flow}, {{"source", GradSource(s)}});
}

Status ReadGrad(Scope& s, const GradInputs& in, Dx* dx) {
  if (!in.dy[0].valid()) return OkStatus();
  const Operation g = GradArray(s, in.inputs[0], in.inputs[2]);
  (*dx)[2] = Op(s, "TensorArrayWriteV3", {g.output(0), in.inputs[1], in.dy[0], g.output(1)},
                {{"T", in.dy[0].dtype}});
  return s.status();
}

Status WriteGrad(Scope& s, const GradInputs& in, Dx* dx) {
  if (!in.dy[0].valid()) return OkStatus();
  const Operation g = GradArray(s, in.inputs[0], in.dy[0]);
  (*dx)[2] = Op(s, "TensorArrayReadV3", {g.output(0), in.inputs[1], g.output(1)},
                {{"dtype", in.inputs[2].dtype}});
  (*dx)[3] = in.dy[0];
  return s.status();
}

Status GatherGrad(Scope& s, const GradInputs& in, Dx* dx) {
  if (!in.dy[0].valid()) return OkStatus();
  const Operation g = GradArray(s, in.inputs[0], in.inputs[2]);
  (*dx)[2] = Op(s, "TensorArrayScatterV3", {g.output(0), in.inputs[1], in.dy[0], g.output(1)},
                {{"T", in.dy[0].dtype}});
  return s.status();
}

Status ScatterGrad(Scope& s, const GradInputs& in, Dx* dx) {
  if (!in.dy[0].valid()) return OkStatus();
  const Operation g = GradArray(s, in.inputs[0], in.dy[0]);
  (*dx)[2] = Op(s, "TensorArrayGatherV3", {g.output(0), in.inputs[1], g.output(1)},
                {{"dtype", in.inputs[2].dtype}});
  (*dx)[3] = in.dy[0];
  return s.status();
}

Status ConcatGrad(Scope& s, const GradInputs& in, Dx* dx) {
  if (!in.dy[0].valid()) return OkStatus();
  const Operation g = GradArray(s, in.inputs[0], in.inputs[1]);
  (*dx)[1] = Op(s, "TensorArraySplitV3", {g.output(0), in.dy[0], in.outputs[1], g.output(1)},
                {{"T", in.dy[0].dtype}});
  return s.status();
}

Status SplitGrad(Scope& s, const GradInputs& in, Dx* dx) {
  if (!in.dy[0].valid()) return OkStatus();
  const Operation g = GradArray(s, in.inputs[0], in.dy[0]);
  (*dx)[1] = s.AddOperation("TensorArrayConcatV3", {g.output(0), g.output(1)},
                            {{"dtype", in.inputs[1].dtype}})
                 .output(0);
  (*dx)[3] = in.dy[0];
  return s.status();
}

// A new array, its size, its gradient array pass no gradient to their
// inputs (a size, a flow they only wait on).
Status NoGradient(Scope&, const GradInputs&, Dx*) { return OkStatus(); }

}  // namespace

Status RegisterTensorArrayGradients(OpRegistry& r) {
  const std::pair<const char*, GradFn> fns[] = {
      {"TensorArrayReadV3", ReadGrad},     {"TensorArrayWriteV3", WriteGrad},
      {"TensorArrayGatherV3", GatherGrad}, {"TensorArrayScatterV3", ScatterGrad},
      {"TensorArrayConcatV3", ConcatGrad}, {"TensorArraySplitV3", SplitGrad},
      {"TensorArrayV3", NoGradient},       {"TensorArraySizeV3", NoGradient},
      {"TensorArrayGradV3", NoGradient},
  };
  for (const auto& [op, fn] : fns) TFD_RETURN_IF_ERROR(r.RegisterGradient(op, fn));
  return OkStatus();
}

}  // namespace tfd::kernels::data_flow
