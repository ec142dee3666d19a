// The convnet ops' GPU kernels: Conv2D, DepthwiseConv2dNative and their
// input and filter gradients, MaxPool, AvgPool and their gradients. The
// attrs, shapes and padding are checked on the host by the CPU kernels' own
// code (window_geometry.h, conv_shapes.h), so both devices accept and refuse
// the same graphs with the same errors; the arithmetic is cnn_ops_gpu.cu's
// (cnn_gpu_math.h). The sizes inputs (input_sizes, filter_sizes,
// orig_input_shape) stay in host memory, where they are read.
#include <vector>

#include "kernels/gpu/gpu_kernel.h"
#include "kernels/gpu/register_gpu.h"
#include "kernels/nn/cnn_gpu_window.h"
#include "kernels/nn/cnn_ops_gpu.h"
#include "kernels/nn/conv_shapes.h"
#include "kernels/nn/windowed_op.h"

namespace tfd::gpu {
namespace {

using kernels::nn::ConvGeometry;
using kernels::nn::WindowAttrs;
using kernels::nn::WindowedOp;

using Launcher = int (*)(int op, int type, const TfdGpuWindow* w, const void* a, const void* b,
                         void* out, void* stream);

// Allocates output 0 of `shape` and has `launch` write every element of it
// with `op` on a and b (either may be null where the op reads none); the
// element type is `typed`'s.
void LaunchWindowed(OpKernelContext& ctx, Launcher launch, int op, const ConvGeometry& g,
                    const TensorShape& shape, const Tensor& typed, const Tensor* a,
                    const Tensor* b) {
  auto type = GpuTypeFor(ctx, typed, kGpuFloats);
  TFD_OP_REQUIRES_OK(ctx, type.status());
  Tensor* out = nullptr;
  TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output_for_overwrite(0, shape, &out));
  const TfdGpuWindow w = kernels::nn::ToGpuWindow(g);
  GpuDevice& dev = GpuDeviceOf(ctx);
  TFD_GPU_LAUNCH(ctx, dev, launch(op, *type, &w, a ? a->raw_data() : nullptr,
                                  b ? b->raw_data() : nullptr, out->raw_data(), dev.stream()));
}

// Conv2D (kOp TFD_GPU_CONV2D), DepthwiseConv2dNative, and their gradients:
// forward (input, filter); input gradient (input_sizes, filter,
// out_backprop); filter gradient (input, filter_sizes, out_backprop).
template <int kOp>
class ConvGpuOp : public WindowedOp {
 public:
  explicit ConvGpuOp(OpKernelConstruction& c)
      : WindowedOp(c, kernels::nn::ConvAttrsFrom(c.attrs())) {}

  void Compute(OpKernelContext& ctx) override {
    constexpr bool kDepthwise = kOp == TFD_GPU_DEPTHWISE || kOp == TFD_GPU_DEPTHWISE_INPUT_GRAD ||
                                kOp == TFD_GPU_DEPTHWISE_FILTER_GRAD;
    constexpr bool kInputGrad = kOp == TFD_GPU_CONV2D_INPUT_GRAD ||
                                kOp == TFD_GPU_DEPTHWISE_INPUT_GRAD;
    constexpr bool kFilterGrad = kOp == TFD_GPU_CONV2D_FILTER_GRAD ||
                                 kOp == TFD_GPU_DEPTHWISE_FILTER_GRAD;
    std::vector<int64_t> input = ctx.input(0).shape().dims(), filter = ctx.input(1).shape().dims();
    if constexpr (kInputGrad) {
      auto sizes = kernels::nn::SizesFromTensor(ctx.input(0), "input_sizes");
      TFD_OP_REQUIRES_OK(ctx, sizes.status());
      input = *sizes;
    } else if constexpr (kFilterGrad) {
      auto sizes = kernels::nn::SizesFromTensor(ctx.input(1), "filter_sizes");
      TFD_OP_REQUIRES_OK(ctx, sizes.status());
      filter = *sizes;
    }
    auto g = kDepthwise ? kernels::nn::MakeDepthwiseGeometry(attrs_, input, filter)
                        : kernels::nn::MakeConvGeometry(attrs_, input, filter);
    TFD_OP_REQUIRES_OK(ctx, g.status());
    if constexpr (kInputGrad || kFilterGrad) {
      const Tensor& grad = ctx.input(2);
      TFD_OP_REQUIRES_OK(ctx, kernels::nn::CheckOutBackprop(grad, *g));
      auto shape = TensorShape::Make(kInputGrad ? input : filter);
      TFD_OP_REQUIRES_OK(ctx, shape.status());
      const Tensor& a = kInputGrad ? ctx.input(1) : ctx.input(0);
      LaunchWindowed(ctx, tfd_gpu_conv, kOp, *g, *shape, grad, &a, &grad);
    } else {
      auto shape = kernels::nn::ToShape(g->output_dims());
      TFD_OP_REQUIRES_OK(ctx, shape.status());
      LaunchWindowed(ctx, tfd_gpu_conv, kOp, *g, *shape, ctx.input(0), &ctx.input(0),
                     &ctx.input(1));
    }
  }
};

// MaxPool (kOp TFD_GPU_MAX_POOL) and AvgPool: input.
template <int kOp>
class PoolGpuOp : public WindowedOp {
 public:
  explicit PoolGpuOp(OpKernelConstruction& c)
      : WindowedOp(c, kernels::nn::PoolAttrsFrom(c.attrs())) {}

  void Compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    auto g = kernels::nn::MakePoolGeometry(attrs_, input.shape().dims());
    TFD_OP_REQUIRES_OK(ctx, g.status());
    auto shape = kernels::nn::ToShape(g->output_dims());
    TFD_OP_REQUIRES_OK(ctx, shape.status());
    LaunchWindowed(ctx, tfd_gpu_pool, kOp, *g, *shape, input, &input, nullptr);
  }
};

// MaxPoolGrad: orig_input, orig_output (its shape checked, its values not
// read: the maxima are found again in orig_input, as on the CPU), grad.
class MaxPoolGradGpuOp : public WindowedOp {
 public:
  explicit MaxPoolGradGpuOp(OpKernelConstruction& c)
      : WindowedOp(c, kernels::nn::PoolAttrsFrom(c.attrs())) {}

  void Compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    const Tensor& grad = ctx.input(2);
    auto g = kernels::nn::MakePoolGeometry(attrs_, input.shape().dims());
    TFD_OP_REQUIRES_OK(ctx, g.status());
    TFD_OP_REQUIRES_OK(ctx, kernels::nn::CheckOutBackprop(grad, *g));
    TFD_OP_REQUIRES(ctx, ctx.input(1).shape() == grad.shape(),
                    errors::InvalidArgument("orig_output has shape ",
                                            ctx.input(1).shape().ToString(),
                                            " but the pooling's output is ",
                                            grad.shape().ToString()));
    LaunchWindowed(ctx, tfd_gpu_pool, TFD_GPU_MAX_POOL_GRAD, *g, input.shape(), grad, &input,
                   &grad);
  }
};

// AvgPoolGrad: orig_input_shape, grad.
class AvgPoolGradGpuOp : public WindowedOp {
 public:
  explicit AvgPoolGradGpuOp(OpKernelConstruction& c)
      : WindowedOp(c, kernels::nn::PoolAttrsFrom(c.attrs())) {}

  void Compute(OpKernelContext& ctx) override {
    auto sizes = kernels::nn::SizesFromTensor(ctx.input(0), "orig_input_shape");
    TFD_OP_REQUIRES_OK(ctx, sizes.status());
    const Tensor& grad = ctx.input(1);
    auto g = kernels::nn::MakePoolGeometry(attrs_, *sizes);
    TFD_OP_REQUIRES_OK(ctx, g.status());
    TFD_OP_REQUIRES_OK(ctx, kernels::nn::CheckOutBackprop(grad, *g));
    auto shape = TensorShape::Make(*sizes);
    TFD_OP_REQUIRES_OK(ctx, shape.status());
    LaunchWindowed(ctx, tfd_gpu_pool, TFD_GPU_AVG_POOL_GRAD, *g, *shape, grad, nullptr, &grad);
  }
};

}  // namespace

Status RegisterCnnGpuKernels(OpRegistry& r) {
  constexpr HostMemory kSizesFirst{.inputs = 1u << 0}, kSizesSecond{.inputs = 1u << 1};
  TFD_RETURN_IF_ERROR(AddGpuKernel<ConvGpuOp<TFD_GPU_CONV2D>>(r, "Conv2D", kFloatT));
  TFD_RETURN_IF_ERROR(AddGpuKernel<ConvGpuOp<TFD_GPU_CONV2D_INPUT_GRAD>>(
      r, "Conv2DBackpropInput", kFloatT, kSizesFirst));
  TFD_RETURN_IF_ERROR(AddGpuKernel<ConvGpuOp<TFD_GPU_CONV2D_FILTER_GRAD>>(
      r, "Conv2DBackpropFilter", kFloatT, kSizesSecond));
  TFD_RETURN_IF_ERROR(
      AddGpuKernel<ConvGpuOp<TFD_GPU_DEPTHWISE>>(r, "DepthwiseConv2dNative", kFloatT));
  TFD_RETURN_IF_ERROR(AddGpuKernel<ConvGpuOp<TFD_GPU_DEPTHWISE_INPUT_GRAD>>(
      r, "DepthwiseConv2dNativeBackpropInput", kFloatT, kSizesFirst));
  TFD_RETURN_IF_ERROR(AddGpuKernel<ConvGpuOp<TFD_GPU_DEPTHWISE_FILTER_GRAD>>(
      r, "DepthwiseConv2dNativeBackpropFilter", kFloatT, kSizesSecond));
  TFD_RETURN_IF_ERROR(AddGpuKernel<PoolGpuOp<TFD_GPU_MAX_POOL>>(r, "MaxPool", kFloatT));
  TFD_RETURN_IF_ERROR(AddGpuKernel<PoolGpuOp<TFD_GPU_AVG_POOL>>(r, "AvgPool", kFloatT));
  TFD_RETURN_IF_ERROR(AddGpuKernel<MaxPoolGradGpuOp>(r, "MaxPoolGrad", kFloatT));
  return AddGpuKernel<AvgPoolGradGpuOp>(r, "AvgPoolGrad", kFloatT, kSizesFirst);
}

}  // namespace tfd::gpu
