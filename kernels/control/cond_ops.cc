// Switch and Merge, the two ops TensorFlow 1.x builds `cond` from, with
// their gradients (TF's control_flow_grad.py). Switch forwards its data to
// one of two outputs and marks the other dead; the executor then runs
// nothing that a dead value reaches (common/op_kernel.h, Value), so the
// untaken branch's nodes never run. Merge forwards whichever input is live.
#include "kernels/control/control_ops.h"

#include "common/gradients.h"
#include "common/op_kernel.h"
#include "kernels/math/grad_util.h"

namespace tfd::kernels {
namespace {

class SwitchOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    const Tensor& pred = ctx.input(1);
    TFD_OP_REQUIRES(ctx, pred.rank() == 0,
                    errors::InvalidArgument("pred must be a scalar, got shape ",
                                            pred.shape().ToString()));
    const int taken = pred.data<bool>()[0] ? 1 : 0;
    ctx.set_output(taken, ctx.input(0));
    ctx.set_output_dead(1 - taken);
  }
  bool is_cheap() const override { return true; }
};

class MergeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    // The executor runs a Merge only with a live input; the first one wins,
    // as TensorFlow's Merge forwards the first to arrive.
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      if (ctx.input_is_dead(i)) continue;
      ctx.set_output(0, ctx.input(i));
      ctx.set_output(1, Tensor::Scalar<int32_t>(i));
      return;
    }
    ctx.SetStatus(errors::Internal("every input of Merge '", ctx.node().name, "' is dead"));
  }
  bool is_cheap() const override { return true; }
};

Status SwitchShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(c.WithRank(1, 0));
  c.set_output(0, c.input(0));
  c.set_output(1, c.input(0));
  return OkStatus();
}

// The most specific shape every input has: dimensions that differ, or ranks
// that differ, become unknown.
Status MergeShape(InferenceContext& c) {
  PartialShape out = c.input(0);
  for (int i = 1; i < c.num_inputs() && out.rank_known(); ++i) {
    const PartialShape& in = c.input(i);
    if (!in.rank_known() || in.rank() != out.rank()) {
      out = PartialShape::Unknown();
      break;
    }
    std::vector<int64_t> dims = out.dims();
    for (int d = 0; d < out.rank(); ++d) {
      if (dims[d] != in.dim(d)) dims[d] = -1;
    }
    out = PartialShape(std::move(dims));
  }
  c.set_output(0, out);
  c.set_output(1, PartialShape({}));
  return OkStatus();
}

// A Switch's gradient is a Merge of its two outputs' gradients: the live one
// is the taken branch's. A branch no gradient reached gets zeros shaped like
// its output, dead exactly when that branch was not taken.
Status SwitchGrad(Scope& s, const GradInputs& in, std::vector<Output>* dx) {
  if (!in.dy[0].valid() && !in.dy[1].valid()) return OkStatus();
  Output g[2];
  for (int b = 0; b < 2; ++b) {
    g[b] = in.dy[b].valid() ? in.dy[b] : grad::ZerosLike(s, in.outputs[b]);
  }
  (*dx)[0] = grad::Op(s, "Merge", {g[0], g[1]});
  return OkStatus();
}

// A Merge's gradient goes back to the input that was forwarded: input i
// gets dy routed through a Switch on value_index == i, dead otherwise.
Status MergeGrad(Scope& s, const GradInputs& in, std::vector<Output>* dx) {
  if (!in.dy[0].valid()) return OkStatus();
  for (size_t i = 0; i < in.inputs.size(); ++i) {
    Output taken = grad::Op(s, "Equal", {in.outputs[1], grad::IntScalar(s, i)});
    (*dx)[i] = s.AddOperation("Switch", {in.dy[0], taken}).output(1);
  }
  return OkStatus();
}

}  // namespace

Status RegisterCondOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<SwitchOp>(
      OpDefBuilder("Switch")
          .Input("data: T")
          .Input("pred: bool")
          .Output("output_false: T")
          .Output("output_true: T")
          .Attr("T: type")
          .Doc("Forwards data to output_true when pred is true, else to output_false; the "
               "other output is dead, and nothing it reaches runs (a Merge excepted). "
               "Shape: data's, on both outputs; pred is a scalar."),
      SwitchShape));
  TFD_RETURN_IF_ERROR(r.Add<MergeOp>(
      OpDefBuilder("Merge")
          .Input("inputs: N * T")
          .Output("output: T")
          .Output("value_index: int32")
          .Attr("T: type")
          .Attr("N: int >= 1")
          .Doc("Forwards its live input and that input's index; runs once an input is "
               "live, and is dead itself when every input is. Shape: what the inputs' "
               "shapes share; value_index is a scalar."),
      MergeShape));
  TFD_RETURN_IF_ERROR(grad::Register(r, "Switch", SwitchGrad));
  return grad::Register(r, "Merge", MergeGrad);
}

}  // namespace tfd::kernels
