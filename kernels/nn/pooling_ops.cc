// MaxPool, AvgPool and their gradients MaxPoolGrad and AvgPoolGrad, with
// TensorFlow's names, inputs and attrs, NHWC only, pooling over rows and
// columns (ksize and strides 1 in the batch and depth dimensions).
//
// Numerics, as numpy's and TensorFlow's: a window holding a NaN pools to
// NaN (the comparison is written so that NaN wins); -inf and +inf pool as
// numbers. SAME padding never enters a window's value: MaxPool ignores the
// padded taps and AvgPool divides by the number of taps inside the input.
// MaxPoolGrad sends each gradient to the window's maximum, the first one in
// row-major window order when several tie, and to the first NaN when there
// is one: the element the forward's value came from.
//
// Direct loops along the channels (contiguous in NHWC, so vectorised);
// large poolings are split over the task's intra-op threads, the forward by
// output pixels, the gradients by images (whose windows never overlap).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "common/op_kernel.h"
#include "kernels/nn/conv_shapes.h"
#include "kernels/nn/nn_internal.h"
#include "kernels/nn/parallel_shards.h"
#include "kernels/nn/window_walk.h"
#include "kernels/nn/windowed_op.h"

namespace tfd::kernels::nn {
namespace {

double Work(const ConvGeometry& g) {
  return static_cast<double>(g.out_pixels()) * static_cast<double>(g.rows.window) *
         static_cast<double>(g.cols.window) * static_cast<double>(g.in_depth);
}

// max(a, v), NaN when either is: v replaces a when larger or NaN, and a
// NaN `a` is never replaced.
template <typename T>
T MaxNan(T a, T v) {
  return (v > a || v != v) ? v : a;
}

template <typename T>
void MaxPoolForward(const ConvGeometry& g, const T* input, T* output, const IntraOpPool* pool) {
  const int64_t depth = g.in_depth;
  ParallelFor(pool, g.out_pixels(), Work(g), [&](int64_t first, int64_t last) {
    PixelCursor at(g, first);
    for (int64_t p = first; p < last; ++p, at.Next()) {
      T* o = output + p * depth;
      std::fill(o, o + depth, -std::numeric_limits<T>::infinity());
      ForEachTap(g, at, [&](int64_t, int64_t pixel) {
        const T* x = input + pixel * depth;
        for (int64_t c = 0; c < depth; ++c) o[c] = MaxNan(o[c], x[c]);
      });
    }
  });
}

template <typename T>
void AvgPoolForward(const ConvGeometry& g, const T* input, T* output, const IntraOpPool* pool) {
  const int64_t depth = g.in_depth;
  ParallelFor(pool, g.out_pixels(), Work(g), [&](int64_t first, int64_t last) {
    PixelCursor at(g, first);
    for (int64_t p = first; p < last; ++p, at.Next()) {
      T* o = output + p * depth;
      std::fill(o, o + depth, T(0));
      int64_t taps = 0;
      ForEachTap(g, at, [&](int64_t, int64_t pixel) {
        const T* x = input + pixel * depth;
        for (int64_t c = 0; c < depth; ++c) o[c] += x[c];
        ++taps;
      });
      const T count = static_cast<T>(taps);
      for (int64_t c = 0; c < depth; ++c) o[c] /= count;
    }
  });
}

// in_backprop of images [first, last): zeroed, then each output pixel's
// gradient sent to its window's maximum per channel. The search keeps, per
// channel, the best value and the ordinal of its tap among the window's taps
// inside the image, chosen without branches: float and int32 lanes of one
// width, so the loop over the channels vectorises (a branch per element on
// random data mispredicts about half the time).
template <typename T>
void MaxPoolGradImages(const ConvGeometry& g, const T* input, const T* grad, T* in_backprop,
                       int64_t first, int64_t last) {
  const int64_t depth = g.in_depth, image_pixels = g.out_rows() * g.out_cols();
  std::fill(in_backprop + first * g.in_rows * g.in_cols * depth,
            in_backprop + last * g.in_rows * g.in_cols * depth, T(0));
  std::vector<T> best(depth);
  std::vector<int32_t> ordinal(depth);
  std::vector<int64_t> tap_pixels(g.rows.window * g.cols.window);
  T* best_c = best.data();
  int32_t* ordinal_c = ordinal.data();
  PixelCursor at(g, first * image_pixels);
  for (int64_t p = first * image_pixels; p < last * image_pixels; ++p, at.Next()) {
    int32_t taps = 0;
    ForEachTap(g, at, [&](int64_t, int64_t pixel) {
      const T* x = input + pixel * depth;
      if (taps == 0) {
        std::copy(x, x + depth, best_c);
        std::fill(ordinal_c, ordinal_c + depth, 0);
      } else {
        const int32_t t = taps;
        for (int64_t c = 0; c < depth; ++c) {
          const T v = x[c], b = best_c[c];
          // A larger value; the first NaN (never replaced).
          const bool take = (v > b) | ((v != v) & (b == b));
          best_c[c] = take ? v : b;
          ordinal_c[c] = take ? t : ordinal_c[c];
        }
      }
      tap_pixels[taps++] = pixel;
    });
    if (taps == 0) continue;
    const T* dy = grad + p * depth;
    for (int64_t c = 0; c < depth; ++c) in_backprop[tap_pixels[ordinal_c[c]] * depth + c] += dy[c];
  }
}

template <typename T>
void AvgPoolGradImages(const ConvGeometry& g, const T* grad, T* in_backprop, int64_t first,
                       int64_t last) {
  const int64_t depth = g.in_depth, image_pixels = g.out_rows() * g.out_cols();
  std::fill(in_backprop + first * g.in_rows * g.in_cols * depth,
            in_backprop + last * g.in_rows * g.in_cols * depth, T(0));
  PixelCursor at(g, first * image_pixels);
  for (int64_t p = first * image_pixels; p < last * image_pixels; ++p, at.Next()) {
    int64_t taps = 0;
    ForEachTap(g, at, [&](int64_t, int64_t) { ++taps; });
    const T count = static_cast<T>(taps);
    const T* dy = grad + p * depth;
    ForEachTap(g, at, [&](int64_t, int64_t pixel) {
      T* dx = in_backprop + pixel * depth;
      for (int64_t c = 0; c < depth; ++c) dx[c] += dy[c] / count;
    });
  }
}

class PoolOpBase : public WindowedOp {
 public:
  explicit PoolOpBase(OpKernelConstruction& c) : WindowedOp(c, PoolAttrsFrom(c.attrs())) {}

 protected:
  LazyIntraOpPool pool_;
};

template <bool kMax>
class PoolOp : public PoolOpBase {
 public:
  using PoolOpBase::PoolOpBase;

  void Compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    auto g = MakePoolGeometry(attrs_, input.shape().dims());
    TFD_OP_REQUIRES_OK(ctx, g.status());
    auto shape = ToShape(g->output_dims());
    TFD_OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output_for_overwrite(0, *shape, &out));
    const IntraOpPool* pool = pool_.Get(ctx);
    TFD_SWITCH_FLOAT(input.dtype(), T,
                     (kMax ? MaxPoolForward<T>(*g, input.data<T>(), out->data<T>(), pool)
                           : AvgPoolForward<T>(*g, input.data<T>(), out->data<T>(), pool)),
                     ctx.SetStatus(UnsupportedDType(input));
                     return;)
  }
};

class MaxPoolGradOp : public PoolOpBase {
 public:
  using PoolOpBase::PoolOpBase;

  void Compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    const Tensor& grad = ctx.input(2);
    auto g = MakePoolGeometry(attrs_, input.shape().dims());
    TFD_OP_REQUIRES_OK(ctx, g.status());
    TFD_OP_REQUIRES_OK(ctx, CheckOutBackprop(grad, *g));
    // orig_output is not read: the maxima are found again in orig_input,
    // which also says where they are.
    TFD_OP_REQUIRES(ctx, ctx.input(1).shape() == grad.shape(),
                    errors::InvalidArgument("orig_output has shape ",
                                            ctx.input(1).shape().ToString(),
                                            " but the pooling's output is ",
                                            grad.shape().ToString()));
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output_for_overwrite(0, input.shape(), &out));
    const IntraOpPool* pool = pool_.Get(ctx);
    TFD_SWITCH_FLOAT(grad.dtype(), T,
                     (ParallelFor(pool, g->batch, Work(*g),
                                  [&](int64_t first, int64_t last) {
                                    MaxPoolGradImages<T>(*g, input.data<T>(), grad.data<T>(),
                                                         out->data<T>(), first, last);
                                  })),
                     ctx.SetStatus(UnsupportedDType(grad));
                     return;)
  }
};

class AvgPoolGradOp : public PoolOpBase {
 public:
  using PoolOpBase::PoolOpBase;

  void Compute(OpKernelContext& ctx) override {
    auto sizes = SizesFromTensor(ctx.input(0), "orig_input_shape");
    TFD_OP_REQUIRES_OK(ctx, sizes.status());
    const Tensor& grad = ctx.input(1);
    auto g = MakePoolGeometry(attrs_, *sizes);
    TFD_OP_REQUIRES_OK(ctx, g.status());
    TFD_OP_REQUIRES_OK(ctx, CheckOutBackprop(grad, *g));
    auto shape = TensorShape::Make(*sizes);
    TFD_OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output_for_overwrite(0, *shape, &out));
    const IntraOpPool* pool = pool_.Get(ctx);
    TFD_SWITCH_FLOAT(grad.dtype(), T,
                     (ParallelFor(pool, g->batch, Work(*g),
                                  [&](int64_t first, int64_t last) {
                                    AvgPoolGradImages<T>(*g, grad.data<T>(), out->data<T>(),
                                                         first, last);
                                  })),
                     ctx.SetStatus(UnsupportedDType(grad));
                     return;)
  }
};

OpDefBuilder& PoolAttrs(OpDefBuilder& b) {
  return b.Attr(kFloatTypeAttr)
      .Attr("ksize: list(int)")
      .Attr("strides: list(int)")
      .Attr("padding: string")
      .Attr("explicit_paddings: list(int) = []")
      .Attr("data_format: string = \"NHWC\"");
}

constexpr const char* kAttrDoc =
    " ksize and strides: [1, rows, cols, 1]; padding: SAME or VALID (EXPLICIT is unsupported); "
    "data_format: NHWC only.";

Status AddPool(OpRegistry& r, const char* name, const char* what) {
  OpDefBuilder b(name);
  b.Input("input: T").Output("output: T");
  const std::string doc =
      std::string(what) +
      " Shape: [batch, out_rows, out_cols, depth], out_rows and out_cols as Conv2D's for a "
      "ksize window; VALID with a window larger than the input is an error." +
      kAttrDoc;
  if (std::string(name) == "MaxPool") return r.Add<PoolOp<true>>(PoolAttrs(b).Doc(doc), PoolShape);
  return r.Add<PoolOp<false>>(PoolAttrs(b).Doc(doc), PoolShape);
}

}  // namespace

Status RegisterPoolingOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(AddPool(r, "MaxPool",
                              "The maximum of each window of input [batch, rows, cols, depth], "
                              "per channel; NaN where the window holds a NaN; SAME's padding is "
                              "never the maximum."));
  TFD_RETURN_IF_ERROR(AddPool(r, "AvgPool",
                              "The mean of each window of input [batch, rows, cols, depth], per "
                              "channel, over the window's elements inside the input (SAME's "
                              "padding is not counted)."));
  OpDefBuilder max_grad("MaxPoolGrad");
  max_grad.Input("orig_input: T").Input("orig_output: T").Input("grad: T").Output("output: T");
  TFD_RETURN_IF_ERROR(r.Add<MaxPoolGradOp>(
      PoolAttrs(max_grad).Doc(
          std::string("Gradient of MaxPool: each element of grad is added at the maximum of its "
                      "window in orig_input (the first maximum in row-major window order on a "
                      "tie, the first NaN when there is one). Shape: orig_input's; orig_output "
                      "and grad have MaxPool's output shape.") +
          kAttrDoc),
      MaxPoolGradShape));
  OpDefBuilder avg_grad("AvgPoolGrad");
  avg_grad.Input("orig_input_shape: int32").Input("grad: T").Output("output: T");
  return r.Add<AvgPoolGradOp>(
      PoolAttrs(avg_grad).Doc(
          std::string("Gradient of AvgPool: each element of grad is spread evenly over its "
                      "window's elements inside the input. Shape: orig_input_shape (4 sizes, "
                      "NHWC); grad has AvgPool's output shape.") +
          kAttrDoc),
      AvgPoolGradShape);
}

}  // namespace tfd::kernels::nn
