// _Arg and _Retval: the nodes a session puts in place of fed and fetched
// tensors. They read and write the step's CallFrame (common/op_kernel.h), so
// an executor knows nothing of feeds and fetches.
#include "kernels/framework/framework_ops.h"

#include "common/op_kernel.h"

namespace tfd::kernels {
namespace {

class ArgOp : public OpKernel {
 public:
  explicit ArgOp(OpKernelConstruction& c) : OpKernel(c) { c.SetStatus(c.GetAttr("index", &index_)); }
  bool is_cheap() const override { return true; }
  void Compute(OpKernelContext& ctx) override {
    const CallFrame* frame = ctx.step().frame;
    TFD_OP_REQUIRES(ctx, frame && index_ >= 0 && index_ < static_cast<int64_t>(frame->args.size()),
                    errors::Internal("no feed #", index_, " in this step"));
    const Tensor& t = frame->args[index_];
    TFD_OP_REQUIRES(ctx, t.dtype() == ctx.output_type(0),
                    errors::InvalidArgument("feed #", index_, " is ", t.Describe(), ", expected ",
                                            DTypeName(ctx.output_type(0))));
    ctx.set_output(0, t);
  }

 private:
  int64_t index_ = 0;
};

class RetvalOp : public OpKernel {
 public:
  explicit RetvalOp(OpKernelConstruction& c) : OpKernel(c) {
    c.SetStatus(c.GetAttr("index", &index_));
  }
  bool is_cheap() const override { return true; }
  void Compute(OpKernelContext& ctx) override {
    CallFrame* frame = ctx.step().frame;
    TFD_OP_REQUIRES(ctx, frame && index_ >= 0 && index_ < static_cast<int64_t>(frame->retvals.size()),
                    errors::Internal("no fetch slot #", index_, " in this step"));
    frame->retvals[index_] = ctx.input(0);
  }

 private:
  int64_t index_ = 0;
};

Status ArgShape(InferenceContext& c) {
  TFD_ASSIGN_OR_RETURN(PartialShape s, c.GetAttr<PartialShape>("shape"));
  c.set_output(0, s);
  return OkStatus();
}

}  // namespace

Status RegisterFrameworkOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<ArgOp>(
      OpDefBuilder("_Arg")
          .Output("output: T")
          .Attr("T: type")
          .Attr("index: int >= 0")
          .Attr("shape: shape = <unknown>")
          .Doc("Internal: the step's feed #index, put in place of a fed tensor by the session. "
               "Shape: the shape attr (the fed value's shape)."),
      ArgShape));
  TFD_RETURN_IF_ERROR(r.Add<RetvalOp>(
      OpDefBuilder("_Retval")
          .Input("input: T")
          .Attr("T: type")
          .Attr("index: int >= 0")
          .SetIsStateful()
          .Doc("Internal: hands its input to the caller as fetch #index. Shape: no outputs."),
      shape_fns::NoOutputs));
  TFD_RETURN_IF_ERROR(RegisterDeviceCopyOps(r));
  return RegisterSendRecvOps(r);
}

}  // namespace tfd::kernels
