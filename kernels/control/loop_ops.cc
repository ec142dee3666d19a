// Enter, Exit, NextIteration and LoopCond: the ops TensorFlow 1.x builds
// `while_loop` from, beside Switch and Merge (cond_ops.cc). Each kernel only
// forwards its input; what makes a loop is where the executor delivers the
// result (daemon/runtime/executor.cc, frames): an Enter's into iteration 0
// of the child frame named by its frame_name (into every iteration when
// is_constant), a NextIteration's into the next iteration of its frame, an
// Exit's into the parent frame. LoopCond marks the loop's predicate. A
// loop's gradient is built as a whole, from its Exits (while_grad.h).
#include "common/op_kernel.h"
#include "common/shape_inference.h"
#include "kernels/control/control_ops.h"
#include "kernels/control/while_grad.h"

namespace tfd::kernels {
namespace {

// Forwards input 0 to output 0.
class ForwardOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override { ctx.set_output(0, ctx.input(0)); }
  bool is_cheap() const override { return true; }
};

class EnterOp : public ForwardOp {
 public:
  explicit EnterOp(OpKernelConstruction& c) : ForwardOp(c) {
    std::string frame;
    int64_t parallel = 0;
    c.SetStatus(c.GetAttr("frame_name", &frame));
    c.SetStatus(c.GetAttr("parallel_iterations", &parallel));
    if (c.status().ok() && frame.empty()) {
      c.SetStatus(errors::InvalidArgument("frame_name is empty: an Enter names the loop it enters"));
    }
    if (c.status().ok() && parallel < 1) {
      c.SetStatus(errors::InvalidArgument("parallel_iterations is ", parallel,
                                          ", expected at least 1"));
    }
  }
};

Status LoopCondShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(c.WithRank(0, 0));
  c.set_output(0, PartialShape({}));
  return OkStatus();
}

}  // namespace

Status RegisterLoopOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<EnterOp>(
      OpDefBuilder("Enter")
          .Input("data: T")
          .Output("output: T")
          .Attr("T: type")
          .Attr("frame_name: string")
          .Attr("is_constant: bool = false")
          .Attr("parallel_iterations: int = 10")
          .Doc("Forwards data into the loop named frame_name: into its first iteration, or "
               "into every iteration when is_constant (a loop invariant). At most "
               "parallel_iterations iterations of the loop run at once. Shape: data's."),
      shape_fns::UnchangedShape));
  TFD_RETURN_IF_ERROR(r.Add<ForwardOp>(
      OpDefBuilder("Exit")
          .Input("data: T")
          .Output("output: T")
          .Attr("T: type")
          .Doc("Forwards data out of its loop into the enclosing frame, in the iteration "
               "where the loop ends; dead in the others. Shape: data's."),
      shape_fns::UnchangedShape));
  TFD_RETURN_IF_ERROR(r.Add<ForwardOp>(
      OpDefBuilder("NextIteration")
          .Input("data: T")
          .Output("output: T")
          .Attr("T: type")
          .Doc("Forwards data to the next iteration of its loop (the back edge into the "
               "loop's Merge). Shape: data's."),
      shape_fns::UnchangedShape));
  TFD_RETURN_IF_ERROR(r.Add<ForwardOp>(
      OpDefBuilder("LoopCond")
          .Input("input: bool")
          .Output("output: bool")
          .Doc("Forwards the loop's predicate: the loop runs another iteration while it is "
               "true. Shape: a scalar."),
      LoopCondShape));
  // AddGradients builds a loop's gradient as a whole when it reaches an Exit.
  return r.RegisterGradient("Exit", WholeGradFn{AddWhileLoopGradient});
}

}  // namespace tfd::kernels
