// DepthwiseConv2dNative and its gradients, with TensorFlow's names, inputs
// and attrs, NHWC only: each input channel c is convolved with its own
// `multiplier` filters, giving output channels c * multiplier + m.
//
// The padding holds zeros that are multiplied like any input, as in Conv2D
// (an infinite weight or gradient beside the padding gives NaN there).
//
// Direct loops, not im2col + GEMM: a depthwise convolution does one
// multiply-add per loaded input element and tap, so it is bound by memory,
// and a GEMM per channel would be a [pixels, taps] x [taps, multiplier]
// product too thin to gain anything. The innermost loops run along the
// channels, which are contiguous in NHWC, so the compiler vectorises them.
// Large ones are split over the task's intra-op threads like Conv2D
// (conv_gemm.h).
#include <algorithm>
#include <memory>
#include <vector>

#include "common/op_kernel.h"
#include "kernels/nn/conv_shapes.h"
#include "kernels/nn/nn_internal.h"
#include "kernels/nn/parallel_shards.h"
#include "kernels/nn/window_walk.h"

namespace tfd::kernels::nn {
namespace {

int64_t Multiplier(const ConvGeometry& g) { return g.in_depth == 0 ? 0 : g.out_depth / g.in_depth; }

double Work(const ConvGeometry& g) {
  return static_cast<double>(g.out_pixels()) * static_cast<double>(g.rows.window) *
         static_cast<double>(g.cols.window) * static_cast<double>(g.out_depth);
}

template <typename T>
void DepthwiseForward(const ConvGeometry& g, const T* input, const T* filter, T* output,
                      const IntraOpPool* pool) {
  const int64_t depth = g.in_depth, out_depth = g.out_depth, mult = Multiplier(g);
  const std::vector<T> zeros(depth, T(0));  // the padding's pixel
  ParallelFor(pool, g.out_pixels(), Work(g), [&](int64_t first, int64_t last) {
    PixelCursor at(g, first);
    for (int64_t p = first; p < last; ++p, at.Next()) {
      T* o = output + p * out_depth;
      std::fill(o, o + out_depth, T(0));
      ForEachTapOrPad(g, at, [&](int64_t tap, int64_t pixel) {
        const T* x = pixel < 0 ? zeros.data() : input + pixel * depth;
        const T* f = filter + tap * out_depth;
        if (mult == 1) {
          for (int64_t c = 0; c < depth; ++c) o[c] += x[c] * f[c];
          return;
        }
        for (int64_t c = 0; c < depth; ++c) {
          for (int64_t m = 0; m < mult; ++m) o[c * mult + m] += x[c] * f[c * mult + m];
        }
      });
    }
  });
}

// Images are independent (their windows never overlap), so they are the shards.
template <typename T>
void DepthwiseInputGrad(const ConvGeometry& g, const T* filter, const T* grad, T* in_backprop,
                        const IntraOpPool* pool) {
  const int64_t depth = g.in_depth, out_depth = g.out_depth, mult = Multiplier(g);
  const int64_t image_size = g.in_rows * g.in_cols * depth;
  const int64_t image_pixels = g.out_rows() * g.out_cols();
  ParallelFor(pool, g.batch, Work(g), [&](int64_t first, int64_t last) {
    std::fill(in_backprop + first * image_size, in_backprop + last * image_size, T(0));
    PixelCursor at(g, first * image_pixels);
    for (int64_t p = first * image_pixels; p < last * image_pixels; ++p, at.Next()) {
      const T* dy = grad + p * out_depth;
      ForEachTap(g, at, [&](int64_t tap, int64_t pixel) {
        T* dx = in_backprop + pixel * depth;
        const T* f = filter + tap * out_depth;
        for (int64_t c = 0; c < depth; ++c) {
          T sum = T(0);
          for (int64_t m = 0; m < mult; ++m) sum += dy[c * mult + m] * f[c * mult + m];
          dx[c] += sum;
        }
      });
    }
  });
}

// acc [taps, out_depth] = the filter gradient from output pixels [first, last).
template <typename T>
void DepthwiseFilterGradPixels(const ConvGeometry& g, const T* input, const T* grad, T* acc,
                               int64_t first, int64_t last) {
  const int64_t depth = g.in_depth, out_depth = g.out_depth, mult = Multiplier(g);
  std::fill(acc, acc + g.rows.window * g.cols.window * out_depth, T(0));
  const std::vector<T> zeros(depth, T(0));  // the padding's pixel
  PixelCursor at(g, first);
  for (int64_t p = first; p < last; ++p, at.Next()) {
    const T* dy = grad + p * out_depth;
    ForEachTapOrPad(g, at, [&](int64_t tap, int64_t pixel) {
      const T* x = pixel < 0 ? zeros.data() : input + pixel * depth;
      T* df = acc + tap * out_depth;
      for (int64_t c = 0; c < depth; ++c) {
        for (int64_t m = 0; m < mult; ++m) df[c * mult + m] += x[c] * dy[c * mult + m];
      }
    });
  }
}

template <typename T>
void DepthwiseFilterGrad(const ConvGeometry& g, const T* input, const T* grad, T* filter_backprop,
                         const IntraOpPool* pool) {
  const int64_t size = g.rows.window * g.cols.window * g.out_depth;
  const int64_t shards = NumShards(pool, g.out_pixels(), Work(g));
  std::vector<std::vector<T>> partial(shards);
  for (int64_t s = 1; s < shards; ++s) partial[s].resize(size);
  RunShards(pool, shards, [&](int64_t s) {
    const auto [first, last] = ShardRange(g.out_pixels(), shards, s);
    DepthwiseFilterGradPixels(g, input, grad, s == 0 ? filter_backprop : partial[s].data(), first,
                              last);
  });
  for (int64_t s = 1; s < shards; ++s) {
    for (int64_t i = 0; i < size; ++i) filter_backprop[i] += partial[s][i];
  }
}

class DepthwiseOpBase : public OpKernel {
 public:
  explicit DepthwiseOpBase(OpKernelConstruction& c) : OpKernel(c) {
    auto attrs = ConvAttrsFrom(c.attrs());
    if (attrs.ok()) {
      attrs_ = *attrs;
    } else {
      c.SetStatus(attrs.status());
    }
  }

 protected:
  // The geometry of input * filter; for a gradient, out_backprop checked against it.
  StatusOr<ConvGeometry> Geometry(const std::vector<int64_t>& input,
                                  const std::vector<int64_t>& filter, const Tensor* grad) const {
    TFD_ASSIGN_OR_RETURN(ConvGeometry g, MakeDepthwiseGeometry(attrs_, input, filter));
    if (grad != nullptr) TFD_RETURN_IF_ERROR(CheckOutBackprop(*grad, g));
    return g;
  }

  WindowAttrs attrs_;
  LazyIntraOpPool pool_;
};

class DepthwiseConvOp : public DepthwiseOpBase {
 public:
  using DepthwiseOpBase::DepthwiseOpBase;

  void Compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    const Tensor& filter = ctx.input(1);
    auto g = Geometry(input.shape().dims(), filter.shape().dims(), nullptr);
    TFD_OP_REQUIRES_OK(ctx, g.status());
    auto shape = ToShape(g->output_dims());
    TFD_OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output_for_overwrite(0, *shape, &out));
    const IntraOpPool* pool = pool_.Get(ctx);
    TFD_SWITCH_FLOAT(
        input.dtype(), T,
        (DepthwiseForward<T>(*g, input.data<T>(), filter.data<T>(), out->data<T>(), pool)),
        ctx.SetStatus(UnsupportedDType(input));
        return;)
  }
};

class DepthwiseInputGradOp : public DepthwiseOpBase {
 public:
  using DepthwiseOpBase::DepthwiseOpBase;

  void Compute(OpKernelContext& ctx) override {
    auto sizes = SizesFromTensor(ctx.input(0), "input_sizes");
    TFD_OP_REQUIRES_OK(ctx, sizes.status());
    const Tensor& filter = ctx.input(1);
    const Tensor& grad = ctx.input(2);
    auto g = Geometry(*sizes, filter.shape().dims(), &grad);
    TFD_OP_REQUIRES_OK(ctx, g.status());
    auto shape = TensorShape::Make(*sizes);
    TFD_OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output_for_overwrite(0, *shape, &out));
    const IntraOpPool* pool = pool_.Get(ctx);
    TFD_SWITCH_FLOAT(
        grad.dtype(), T,
        (DepthwiseInputGrad<T>(*g, filter.data<T>(), grad.data<T>(), out->data<T>(), pool)),
        ctx.SetStatus(UnsupportedDType(grad));
        return;)
  }
};

class DepthwiseFilterGradOp : public DepthwiseOpBase {
 public:
  using DepthwiseOpBase::DepthwiseOpBase;

  void Compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    auto sizes = SizesFromTensor(ctx.input(1), "filter_sizes");
    TFD_OP_REQUIRES_OK(ctx, sizes.status());
    const Tensor& grad = ctx.input(2);
    auto g = Geometry(input.shape().dims(), *sizes, &grad);
    TFD_OP_REQUIRES_OK(ctx, g.status());
    auto shape = TensorShape::Make(*sizes);
    TFD_OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output_for_overwrite(0, *shape, &out));
    const IntraOpPool* pool = pool_.Get(ctx);
    TFD_SWITCH_FLOAT(
        grad.dtype(), T,
        (DepthwiseFilterGrad<T>(*g, input.data<T>(), grad.data<T>(), out->data<T>(), pool)),
        ctx.SetStatus(UnsupportedDType(grad));
        return;)
  }
};

OpDefBuilder& DepthwiseAttrs(OpDefBuilder& b) {
  return b.Attr(kFloatTypeAttr)
      .Attr("strides: list(int)")
      .Attr("padding: string")
      .Attr("explicit_paddings: list(int) = []")
      .Attr("data_format: string = \"NHWC\"")
      .Attr("dilations: list(int) = [1, 1, 1, 1]");
}

constexpr const char* kAttrDoc =
    " strides and dilations: [1, rows, cols, 1]; padding: SAME or VALID (EXPLICIT is "
    "unsupported); data_format: NHWC only.";

}  // namespace

Status RegisterDepthwiseConvOps(OpRegistry& r) {
  OpDefBuilder conv("DepthwiseConv2dNative");
  conv.Input("input: T").Input("filter: T").Output("output: T");
  TFD_RETURN_IF_ERROR(r.Add<DepthwiseConvOp>(
      DepthwiseAttrs(conv).Doc(
          std::string("Depthwise 2-D convolution: channel c of input [batch, rows, cols, depth] "
                      "convolved with filter[:, :, c, m] for each m of filter [filter_rows, "
                      "filter_cols, depth, multiplier] gives output channel c * multiplier + m. "
                      "Shape: [batch, out_rows, out_cols, depth * multiplier], out_rows and "
                      "out_cols as Conv2D's.") +
          kAttrDoc),
      DepthwiseShape));
  OpDefBuilder input_grad("DepthwiseConv2dNativeBackpropInput");
  input_grad.Input("input_sizes: int32").Input("filter: T").Input("out_backprop: T").Output(
      "output: T");
  TFD_RETURN_IF_ERROR(r.Add<DepthwiseInputGradOp>(
      DepthwiseAttrs(input_grad)
          .Doc(std::string("Gradient of DepthwiseConv2dNative with respect to its input. Shape: "
                           "input_sizes (4 sizes, NHWC).") +
               kAttrDoc),
      DepthwiseBackpropInputShape));
  OpDefBuilder filter_grad("DepthwiseConv2dNativeBackpropFilter");
  filter_grad.Input("input: T").Input("filter_sizes: int32").Input("out_backprop: T").Output(
      "output: T");
  return r.Add<DepthwiseFilterGradOp>(
      DepthwiseAttrs(filter_grad)
          .Doc(std::string("Gradient of DepthwiseConv2dNative with respect to its filter. Shape: "
                           "filter_sizes (4 sizes: filter_rows, filter_cols, depth, "
                           "multiplier).") +
               kAttrDoc),
      DepthwiseBackpropFilterShape);
}

}  // namespace tfd::kernels::nn
