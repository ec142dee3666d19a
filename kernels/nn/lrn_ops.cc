// LRN (local response normalization, as in AlexNet and TensorFlow's CIFAR-10
// model) and its gradient LRNGrad, with TensorFlow's names and attrs. Along
// the last dimension of a rank-4 input:
//   norm[d] = bias + alpha * sum of input[d']^2 for |d' - d| <= depth_radius
//   output[d] = input[d] * norm[d]^-beta
// LRNGrad follows TensorFlow's CPU kernel: for each d, and each d' in its
// window, output[d'] += grads[d] * ([d' == d] * norm[d]^-beta
//                                    - 2 * alpha * beta * input[d'] * output_image[d] / norm[d]).
//
// Each pixel's channels are summed directly (2 * depth_radius + 1 terms),
// not with running sums along the channels, whose subtractions would
// cancel when a large value leaves the window.
#include <cmath>
#include <vector>

#include "common/op_kernel.h"
#include "kernels/nn/nn_internal.h"

namespace tfd::kernels::nn {
namespace {

struct LrnAttrs {
  int64_t depth_radius = 5;
  double bias = 1, alpha = 1, beta = 0.5;
};

StatusOr<LrnAttrs> LrnAttrsFrom(const AttrMap& attrs) {
  LrnAttrs a;
  auto get = [&](const char* name, auto* out) -> Status {
    auto it = attrs.find(name);
    if (it == attrs.end()) return OkStatus();
    using V = std::remove_pointer_t<decltype(out)>;
    if (const V* v = std::get_if<V>(&it->second)) {
      *out = *v;
      return OkStatus();
    }
    return errors::InvalidArgument("attr '", name, "' has type ", AttrTypeName(it->second));
  };
  TFD_RETURN_IF_ERROR(get("depth_radius", &a.depth_radius));
  TFD_RETURN_IF_ERROR(get("bias", &a.bias));
  TFD_RETURN_IF_ERROR(get("alpha", &a.alpha));
  TFD_RETURN_IF_ERROR(get("beta", &a.beta));
  if (a.depth_radius < 0 || a.depth_radius > (int64_t{1} << 31)) {
    return errors::InvalidArgument("attr 'depth_radius' must be between 0 and 2^31, got ",
                                   a.depth_radius);
  }
  return a;
}

// norm[d] for one pixel's `depth` channels.
template <typename T>
void Norms(const LrnAttrs& a, const T* x, int64_t depth, T* norm) {
  const T bias = static_cast<T>(a.bias), alpha = static_cast<T>(a.alpha);
  for (int64_t d = 0; d < depth; ++d) {
    const int64_t lo = std::max<int64_t>(0, d - a.depth_radius);
    const int64_t hi = std::min<int64_t>(depth, d + a.depth_radius + 1);
    T sum = T(0);
    for (int64_t k = lo; k < hi; ++k) sum += x[k] * x[k];
    norm[d] = bias + alpha * sum;
  }
}

template <typename T>
void LrnForward(const LrnAttrs& a, const T* x, int64_t pixels, int64_t depth, T* y) {
  std::vector<T> norm(depth);
  const T neg_beta = static_cast<T>(-a.beta);
  for (int64_t p = 0; p < pixels; ++p) {
    const T* xp = x + p * depth;
    T* yp = y + p * depth;
    Norms(a, xp, depth, norm.data());
    for (int64_t d = 0; d < depth; ++d) yp[d] = xp[d] * std::pow(norm[d], neg_beta);
  }
}

template <typename T>
void LrnBackward(const LrnAttrs& a, const T* dy, const T* x, const T* y, int64_t pixels,
                 int64_t depth, T* dx) {
  std::vector<T> norm(depth);
  const T neg_beta = static_cast<T>(-a.beta);
  const T two_alpha_beta = static_cast<T>(2 * a.alpha * a.beta);
  for (int64_t p = 0; p < pixels; ++p) {
    const T *dyp = dy + p * depth, *xp = x + p * depth, *yp = y + p * depth;
    T* dxp = dx + p * depth;
    Norms(a, xp, depth, norm.data());
    std::fill(dxp, dxp + depth, T(0));
    for (int64_t d = 0; d < depth; ++d) {
      const int64_t lo = std::max<int64_t>(0, d - a.depth_radius);
      const int64_t hi = std::min<int64_t>(depth, d + a.depth_radius + 1);
      const T shared = -two_alpha_beta * yp[d] / norm[d] * dyp[d];
      for (int64_t k = lo; k < hi; ++k) dxp[k] += shared * xp[k];
      dxp[d] += std::pow(norm[d], neg_beta) * dyp[d];
    }
  }
}

Status CheckRank4(const Tensor& t, const char* what) {
  if (t.rank() == 4) return OkStatus();
  return errors::InvalidArgument(what, " must have rank 4 but has shape ", t.shape().ToString());
}

class LrnOpBase : public OpKernel {
 public:
  explicit LrnOpBase(OpKernelConstruction& c) : OpKernel(c) {
    auto a = LrnAttrsFrom(c.attrs());
    if (a.ok()) {
      attrs_ = *a;
    } else {
      c.SetStatus(a.status());
    }
  }

 protected:
  LrnAttrs attrs_;
};

class LrnOp : public LrnOpBase {
 public:
  using LrnOpBase::LrnOpBase;

  void Compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    TFD_OP_REQUIRES_OK(ctx, CheckRank4(x, "input"));
    Tensor* y = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output_for_overwrite(0, x.shape(), &y));
    const int64_t depth = x.dim(3), pixels = depth == 0 ? 0 : x.num_elements() / depth;
    TFD_SWITCH_FLOAT(x.dtype(), T,
                     (LrnForward<T>(attrs_, x.data<T>(), pixels, depth, y->data<T>())),
                     ctx.SetStatus(UnsupportedDType(x));
                     return;)
  }
};

class LrnGradOp : public LrnOpBase {
 public:
  using LrnOpBase::LrnOpBase;

  void Compute(OpKernelContext& ctx) override {
    const Tensor& dy = ctx.input(0);
    const Tensor& x = ctx.input(1);
    const Tensor& y = ctx.input(2);
    TFD_OP_REQUIRES_OK(ctx, CheckRank4(x, "input_image"));
    TFD_OP_REQUIRES(ctx, dy.shape() == x.shape() && y.shape() == x.shape(),
                    errors::InvalidArgument("input_grads, input_image and output_image must have "
                                            "one shape, got ",
                                            dy.shape().ToString(), ", ", x.shape().ToString(),
                                            " and ", y.shape().ToString()));
    Tensor* dx = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output_for_overwrite(0, x.shape(), &dx));
    const int64_t depth = x.dim(3), pixels = depth == 0 ? 0 : x.num_elements() / depth;
    TFD_SWITCH_FLOAT(x.dtype(), T,
                     (LrnBackward<T>(attrs_, dy.data<T>(), x.data<T>(), y.data<T>(), pixels, depth,
                                     dx->data<T>())),
                     ctx.SetStatus(UnsupportedDType(x));
                     return;)
  }
};

Status LrnShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(LrnAttrsFrom(c.attrs()).status());
  TFD_RETURN_IF_ERROR(c.WithRank(0, 4));
  c.set_output(0, c.input(0).rank_known() ? c.input(0) : PartialShape::UnknownOfRank(4));
  return OkStatus();
}

Status LrnGradShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(LrnAttrsFrom(c.attrs()).status());
  PartialShape merged = PartialShape::UnknownOfRank(4);
  for (int i = 0; i < 3; ++i) {
    TFD_RETURN_IF_ERROR(c.WithRank(i, 4));
    auto m = merged.Merge(c.input(i));
    if (!m.ok()) {
      return errors::InvalidArgument("input_grads, input_image and output_image must have one "
                                     "shape, got ",
                                     c.input(0).ToString(), ", ", c.input(1).ToString(), " and ",
                                     c.input(2).ToString());
    }
    merged = *m;
  }
  c.set_output(0, merged);
  return OkStatus();
}

constexpr const char* kAttrs[] = {"depth_radius: int = 5", "bias: float = 1.0",
                                  "alpha: float = 1.0", "beta: float = 0.5"};

}  // namespace

Status RegisterLrnOps(OpRegistry& r) {
  OpDefBuilder fwd("LRN");
  fwd.Input("input: T").Output("output: T").Attr(kFloatTypeAttr);
  for (const char* a : kAttrs) fwd.Attr(a);
  fwd.Doc(
      "Local response normalization along the last dimension: output[d] = input[d] / (bias + "
      "alpha * sum of input[d']^2 for |d' - d| <= depth_radius)^beta. Shape: that of input, "
      "rank 4.");
  TFD_RETURN_IF_ERROR(r.Add<LrnOp>(fwd, LrnShape));
  OpDefBuilder grad("LRNGrad");
  grad.Input("input_grads: T").Input("input_image: T").Input("output_image: T");
  grad.Output("output: T").Attr(kFloatTypeAttr);
  for (const char* a : kAttrs) grad.Attr(a);
  grad.Doc(
      "Gradient of LRN with respect to its input: input_grads is the gradient of LRN's output, "
      "input_image and output_image are LRN's input and output. Shape: the common shape of the "
      "three, rank 4.");
  return r.Add<LrnGradOp>(grad, LrnGradShape);
}

}  // namespace tfd::kernels::nn
