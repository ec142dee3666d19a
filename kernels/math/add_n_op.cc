// AddN: the element-wise sum of N tensors of one shape (gradient
// accumulation's workhorse).
#include "common/op_kernel.h"
#include "common/tensor_eigen.h"
#include "kernels/math/math_ops_internal.h"

namespace tfd::kernels {
namespace {

class AddNOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext& ctx) override {
    const Tensor& first = ctx.input(0);
    for (int i = 1; i < ctx.num_inputs(); ++i) {
      TFD_OP_REQUIRES(ctx, ctx.input(i).shape() == first.shape(),
                      errors::InvalidArgument("AddN inputs must all have the same shape, but "
                                              "input 0 is ",
                                              first.shape().ToString(), " and input ", i, " is ",
                                              ctx.input(i).shape().ToString()));
    }
    if (ctx.num_inputs() == 1) {
      ctx.set_output(0, first);  // immutable, so sharing is a copy
      return;
    }
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, first.shape(), &out));
    TFD_SWITCH_NUMERIC(first.dtype(), T, {
      auto sum = EigenFlat<T>(*out);
      // Pairs first: one pass over the output per two inputs.
      sum = EigenFlat<T>(ctx.input(0)) + EigenFlat<T>(ctx.input(1));
      int i = 2;
      for (; i + 1 < ctx.num_inputs(); i += 2) {
        sum += EigenFlat<T>(ctx.input(i)) + EigenFlat<T>(ctx.input(i + 1));
      }
      if (i < ctx.num_inputs()) sum += EigenFlat<T>(ctx.input(i));
    }, {
      ctx.SetStatus(errors::InvalidArgument("AddN does not support dtype ",
                                            DTypeName(first.dtype())));
    });
  }
};

Status AddNShape(InferenceContext& c) {
  PartialShape out = c.input(0);
  for (int i = 1; i < c.num_inputs(); ++i) {
    auto merged = out.Merge(c.input(i));
    if (!merged.ok()) {
      return errors::InvalidArgument("all inputs must have the same shape, but input ", i,
                                     " has shape ", c.input(i).ToString(),
                                     " where the others have ", out.ToString());
    }
    out = *merged;
  }
  c.set_output(0, out);
  return OkStatus();
}

}  // namespace

Status RegisterAddNOp(OpRegistry& r) {
  return r.Add<AddNOp>(OpDefBuilder("AddN")
                           .Input("inputs: N * T")
                           .Output("sum: T")
                           .Attr("N: int >= 1")
                           .Attr("T: {float32, float64, int32, int64, uint8}")
                           .Doc("The element-wise sum of all inputs, which must share one shape "
                                "(no broadcasting). Shape: the common shape of the inputs."),
                       AddNShape);
}

}  // namespace tfd::kernels
