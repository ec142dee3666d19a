// StopGradient and PreventGradient: identities in the forward pass (the
// output shares the input's buffer) that end the backward pass. Gradients
// do not flow through StopGradient, so the tensors before it get none
// (tf.stop_gradient); differentiating through PreventGradient is an error
// naming the node and its message (tf.raw_ops.PreventGradient), for graphs
// whose author knows a gradient there would be wrong.
#include <string>
#include <vector>

#include "common/gradients.h"
#include "common/op_kernel.h"
#include "kernels/array/array_ops_internal.h"
#include "kernels/math/grad_util.h"

namespace tfd::kernels::array {
namespace {

class ForwardInputOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override { ctx.set_output(0, ctx.input(0)); }
  bool is_cheap() const override { return true; }
};

Status StopGradientGrad(Scope&, const GradInputs&, std::vector<Output>*) { return OkStatus(); }

Status PreventGradientGrad(Scope&, const GradInputs& in, std::vector<Output>*) {
  TFD_ASSIGN_OR_RETURN(std::string message, in.GetAttr<std::string>("message"));
  return errors::InvalidArgument("gradient explicitly disabled by PreventGradient node '",
                                 in.node.name, "'", message.empty() ? "" : ": ", message);
}

}  // namespace

Status RegisterStopGradientOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<ForwardInputOp>(
      OpDefBuilder("StopGradient")
          .Input("input: T")
          .Output("output: T")
          .Attr("T: type")
          .Doc("Outputs input unchanged; no gradient flows back through it, so what it reads "
               "is treated as a constant when gradients are built. Shape: input's shape."),
      shape_fns::UnchangedShape));
  TFD_RETURN_IF_ERROR(r.Add<ForwardInputOp>(
      OpDefBuilder("PreventGradient")
          .Input("input: T")
          .Output("output: T")
          .Attr("T: type")
          .Attr("message: string = \"\"")
          .Doc("Outputs input unchanged; building a gradient through it is INVALID_ARGUMENT "
               "naming the node and attr message. Shape: input's shape."),
      shape_fns::UnchangedShape));
  TFD_RETURN_IF_ERROR(grad::Register(r, "StopGradient", StopGradientGrad));
  return grad::Register(r, "PreventGradient", PreventGradientGrad);
}

}  // namespace tfd::kernels::array
