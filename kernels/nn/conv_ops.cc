// Conv2D and its two gradients, Conv2DBackpropInput and Conv2DBackpropFilter,
// with TensorFlow's names, inputs and attrs, NHWC only (NCHW and EXPLICIT
// padding are refused by name, at graph and kernel time). The arithmetic,
// and why it is im2col + GEMM, is in conv_gemm.h.
#include "common/op_kernel.h"
#include "kernels/nn/conv_gemm.h"
#include "kernels/nn/conv_shapes.h"
#include "kernels/nn/nn_internal.h"
#include "kernels/nn/parallel_shards.h"
#include "kernels/nn/windowed_op.h"

namespace tfd::kernels::nn {
namespace {

// The attrs checked once, when the kernel is built.
class ConvOpBase : public WindowedOp {
 public:
  explicit ConvOpBase(OpKernelConstruction& c) : WindowedOp(c, ConvAttrsFrom(c.attrs())) {}

 protected:
  LazyIntraOpPool pool_;
};

class Conv2DOp : public ConvOpBase {
 public:
  using ConvOpBase::ConvOpBase;

  void Compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    const Tensor& filter = ctx.input(1);
    auto g = MakeConvGeometry(attrs_, input.shape().dims(), filter.shape().dims());
    TFD_OP_REQUIRES_OK(ctx, g.status());
    auto shape = ToShape(g->output_dims());
    TFD_OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output_for_overwrite(0, *shape, &out));
    const IntraOpPool* pool = pool_.Get(ctx);
    TFD_SWITCH_FLOAT(
        input.dtype(), T,
        (ConvForward<T>(*g, input.data<T>(), filter.data<T>(), out->data<T>(), pool)),
        ctx.SetStatus(UnsupportedDType(input));
        return;)
  }
};

class Conv2DBackpropInputOp : public ConvOpBase {
 public:
  using ConvOpBase::ConvOpBase;

  void Compute(OpKernelContext& ctx) override {
    auto sizes = SizesFromTensor(ctx.input(0), "input_sizes");
    TFD_OP_REQUIRES_OK(ctx, sizes.status());
    const Tensor& filter = ctx.input(1);
    const Tensor& grad = ctx.input(2);
    auto g = MakeConvGeometry(attrs_, *sizes, filter.shape().dims());
    TFD_OP_REQUIRES_OK(ctx, g.status());
    TFD_OP_REQUIRES_OK(ctx, CheckOutBackprop(grad, *g));
    auto shape = TensorShape::Make(*sizes);
    TFD_OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output_for_overwrite(0, *shape, &out));
    const IntraOpPool* pool = pool_.Get(ctx);
    TFD_SWITCH_FLOAT(
        grad.dtype(), T,
        (ConvBackpropInput<T>(*g, filter.data<T>(), grad.data<T>(), out->data<T>(), pool)),
        ctx.SetStatus(UnsupportedDType(grad));
        return;)
  }
};

class Conv2DBackpropFilterOp : public ConvOpBase {
 public:
  using ConvOpBase::ConvOpBase;

  void Compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    auto sizes = SizesFromTensor(ctx.input(1), "filter_sizes");
    TFD_OP_REQUIRES_OK(ctx, sizes.status());
    const Tensor& grad = ctx.input(2);
    auto g = MakeConvGeometry(attrs_, input.shape().dims(), *sizes);
    TFD_OP_REQUIRES_OK(ctx, g.status());
    TFD_OP_REQUIRES_OK(ctx, CheckOutBackprop(grad, *g));
    auto shape = TensorShape::Make(*sizes);
    TFD_OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output_for_overwrite(0, *shape, &out));
    const IntraOpPool* pool = pool_.Get(ctx);
    TFD_SWITCH_FLOAT(
        grad.dtype(), T,
        (ConvBackpropFilter<T>(*g, input.data<T>(), grad.data<T>(), out->data<T>(), pool)),
        ctx.SetStatus(UnsupportedDType(grad));
        return;)
  }
};

// The attrs Conv2D and its gradients share, as TensorFlow declares them
// (use_cudnn_on_gpu is accepted and ignored, so TF's graphs load).
OpDefBuilder& ConvAttrs(OpDefBuilder& b) {
  return b.Attr(kFloatTypeAttr)
      .Attr("strides: list(int)")
      .Attr("use_cudnn_on_gpu: bool = true")
      .Attr("padding: string")
      .Attr("explicit_paddings: list(int) = []")
      .Attr("data_format: string = \"NHWC\"")
      .Attr("dilations: list(int) = [1, 1, 1, 1]");
}

constexpr const char* kConvAttrDoc =
    " strides and dilations: [1, rows, cols, 1]; padding: SAME or VALID (EXPLICIT is "
    "unsupported); data_format: NHWC only.";

}  // namespace

Status RegisterConvOps(OpRegistry& r) {
  OpDefBuilder conv("Conv2D");
  conv.Input("input: T").Input("filter: T").Output("output: T");
  TFD_RETURN_IF_ERROR(r.Add<Conv2DOp>(
      ConvAttrs(conv).Doc(std::string(
                              "2-D convolution (cross-correlation, as TensorFlow's) of input "
                              "[batch, rows, cols, depth] with filter [filter_rows, filter_cols, "
                              "depth, out_depth]. Shape: [batch, out_rows, out_cols, out_depth]; "
                              "VALID: out = (in - (filter - 1) * dilation - 1) / stride + 1, an "
                              "error when the dilated filter is larger than the input; SAME: out "
                              "= ceil(in / stride), the padding's odd element at the bottom and "
                              "right.") +
                          kConvAttrDoc),
      ConvShape));
  OpDefBuilder input_grad("Conv2DBackpropInput");
  input_grad.Input("input_sizes: int32").Input("filter: T").Input("out_backprop: T").Output(
      "output: T");
  TFD_RETURN_IF_ERROR(r.Add<Conv2DBackpropInputOp>(
      ConvAttrs(input_grad)
          .Doc(std::string("Gradient of Conv2D with respect to its input. Shape: input_sizes "
                           "(4 sizes, NHWC); out_backprop must have the shape Conv2D gives for "
                           "that input and filter.") +
               kConvAttrDoc),
      BackpropInputShape));
  OpDefBuilder filter_grad("Conv2DBackpropFilter");
  filter_grad.Input("input: T").Input("filter_sizes: int32").Input("out_backprop: T").Output(
      "output: T");
  return r.Add<Conv2DBackpropFilterOp>(
      ConvAttrs(filter_grad)
          .Doc(std::string("Gradient of Conv2D with respect to its filter. Shape: filter_sizes "
                           "(4 sizes: filter_rows, filter_cols, depth, out_depth); out_backprop "
                           "must have the shape Conv2D gives for that input and filter.") +
               kConvAttrDoc),
      BackpropFilterShape);
}

}  // namespace tfd::kernels::nn
