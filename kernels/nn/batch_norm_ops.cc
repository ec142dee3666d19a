// FusedBatchNorm and FusedBatchNormGrad, with TensorFlow's names, inputs,
// outputs and attrs (its CPU kernels' conventions), NHWC only, x of rank 4
// seen as [rows = batch * height * width, channels].
//
// Training (is_training): y = (x - mean) / sqrt(var + epsilon) * scale +
// offset with the batch's mean and (biased) variance per channel; outputs
// batch_mean and batch_variance are the running estimates to keep (the
// batch's own with exponential_avg_factor 1, the default; the variance then
// Bessel-corrected, * rows / (rows - 1)), reserve_space_1 and _2 the batch
// mean and biased variance that FusedBatchNormGrad takes back. Inference:
// the given mean and variance are used and passed through.
//
// Sums over the rows are pairwise (pairwise_sum.h) so that a large batch
// keeps float32's precision; the variance is the mean of squared
// deviations (two passes), never E[x^2] - E[x]^2, which cancels.
#include <cmath>
#include <vector>

#include "common/op_kernel.h"
#include "kernels/math/pairwise_sum.h"
#include "kernels/nn/nn_internal.h"

namespace tfd::kernels::nn {
namespace {

struct BatchNormAttrs {
  double epsilon = 1e-4;
  double exponential_avg_factor = 1;
  bool is_training = true;
};

StatusOr<BatchNormAttrs> BatchNormAttrsFrom(const AttrMap& attrs, bool forward) {
  BatchNormAttrs a;
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
  TFD_RETURN_IF_ERROR(get("epsilon", &a.epsilon));
  TFD_RETURN_IF_ERROR(get("is_training", &a.is_training));
  if (forward) TFD_RETURN_IF_ERROR(get("exponential_avg_factor", &a.exponential_avg_factor));
  auto format = attrs.find("data_format");
  if (format != attrs.end() && std::get_if<std::string>(&format->second) != nullptr &&
      std::get<std::string>(format->second) != "NHWC") {
    const std::string& f = std::get<std::string>(format->second);
    return errors::InvalidArgument("data_format ", f,
                                   f == "NCHW" ? " is unsupported: only NHWC is implemented"
                                               : " is unknown; expected NHWC");
  }
  if (!(a.epsilon >= 0)) {
    return errors::InvalidArgument("attr 'epsilon' must be >= 0, got ", a.epsilon);
  }
  return a;
}

// A per-channel input: a vector of `channels` elements; in training, the
// mean and variance inputs may also be empty (TensorFlow's convention when
// exponential_avg_factor is 1, as they are not read).
Status CheckChannelVector(const Tensor& t, int64_t channels, const char* what, bool may_be_empty) {
  if (t.rank() == 1 && (t.dim(0) == channels || (may_be_empty && t.dim(0) == 0))) {
    return OkStatus();
  }
  return errors::InvalidArgument(what, " must be a vector of ", channels,
                                 " elements (the channels of x), got shape ",
                                 t.shape().ToString());
}

// Per channel over [rows, channels]: mean, and biased variance with `scratch`
// (rows * channels elements) used for the squared deviations.
template <typename T>
void Moments(const T* x, int64_t rows, int64_t channels, T* scratch, T* mean, T* var) {
  PairwiseColumnSums(x, rows, channels, mean);
  const T inv_rows = T(1) / static_cast<T>(rows);  // inf for no rows: NaN moments, as TF's
  for (int64_t c = 0; c < channels; ++c) mean[c] *= inv_rows;
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * channels;
    T* sr = scratch + r * channels;
    for (int64_t c = 0; c < channels; ++c) sr[c] = (xr[c] - mean[c]) * (xr[c] - mean[c]);
  }
  PairwiseColumnSums(scratch, rows, channels, var);
  for (int64_t c = 0; c < channels; ++c) var[c] *= inv_rows;
}

template <typename T>
struct BatchNormOutputs {
  T *y, *batch_mean, *batch_var, *saved_mean, *saved_var;
};

template <typename T>
void BatchNormForward(const BatchNormAttrs& a, const Tensor& x, const Tensor& scale,
                      const Tensor& offset, const Tensor& mean_in, const Tensor& var_in,
                      BatchNormOutputs<T> out) {
  const int64_t channels = x.dim(3), rows = x.num_elements() / std::max<int64_t>(channels, 1);
  const T* xs = x.data<T>();
  std::vector<T> mean(channels), var(channels);
  if (a.is_training) {
    Moments(xs, rows, channels, out.y, mean.data(), var.data());
  } else {
    std::copy(mean_in.data<T>(), mean_in.data<T>() + channels, mean.begin());
    std::copy(var_in.data<T>(), var_in.data<T>() + channels, var.begin());
  }
  std::vector<T> k(channels);  // scale / sqrt(var + epsilon)
  for (int64_t c = 0; c < channels; ++c) {
    k[c] = scale.data<T>()[c] / std::sqrt(var[c] + static_cast<T>(a.epsilon));
  }
  const T* b = offset.data<T>();
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = xs + r * channels;
    T* yr = out.y + r * channels;
    for (int64_t c = 0; c < channels; ++c) yr[c] = (xr[c] - mean[c]) * k[c] + b[c];
  }
  const T f = static_cast<T>(a.exponential_avg_factor);
  const T bessel = static_cast<T>(rows) / static_cast<T>(std::max<int64_t>(rows - 1, 1));
  for (int64_t c = 0; c < channels; ++c) {
    out.saved_mean[c] = mean[c];
    out.saved_var[c] = var[c];
    T m = mean[c], v = a.is_training ? var[c] * bessel : var[c];
    if (a.is_training && f != T(1)) {
      m = (T(1) - f) * mean_in.data<T>()[c] + f * m;
      v = (T(1) - f) * var_in.data<T>()[c] + f * v;
    }
    out.batch_mean[c] = m;
    out.batch_var[c] = v;
  }
}

class FusedBatchNormOp : public OpKernel {
 public:
  explicit FusedBatchNormOp(OpKernelConstruction& c) : OpKernel(c) {
    auto a = BatchNormAttrsFrom(c.attrs(), /*forward=*/true);
    if (a.ok()) {
      attrs_ = *a;
    } else {
      c.SetStatus(a.status());
    }
  }

  void Compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    TFD_OP_REQUIRES(ctx, x.rank() == 4,
                    errors::InvalidArgument("x must have rank 4 (NHWC) but has shape ",
                                            x.shape().ToString()));
    const int64_t channels = x.dim(3);
    // The running estimates are read in inference, and in training when
    // they are averaged with the batch's.
    const bool reads_estimates = !attrs_.is_training || attrs_.exponential_avg_factor != 1;
    const char* names[] = {"scale", "offset", "mean", "variance"};
    for (int i = 1; i <= 4; ++i) {
      TFD_OP_REQUIRES_OK(ctx, CheckChannelVector(ctx.input(i), channels, names[i - 1],
                                                 i >= 3 && !reads_estimates));
    }
    Tensor* outs[5];
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output_for_overwrite(0, x.shape(), &outs[0]));
    for (int i = 1; i < 5; ++i) {
      TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output_for_overwrite(i, TensorShape({channels}),
                                                                &outs[i]));
    }
    TFD_SWITCH_FLOAT(x.dtype(), T,
                     (BatchNormForward<T>(attrs_, x, ctx.input(1), ctx.input(2), ctx.input(3),
                                          ctx.input(4),
                                          {outs[0]->data<T>(), outs[1]->data<T>(),
                                           outs[2]->data<T>(), outs[3]->data<T>(),
                                           outs[4]->data<T>()})),
                     ctx.SetStatus(UnsupportedDType(x));
                     return;)
  }

 private:
  BatchNormAttrs attrs_;
};

template <typename T>
void BatchNormGrad(const BatchNormAttrs& a, const Tensor& dy_t, const Tensor& x_t,
                   const Tensor& scale, const Tensor& mean_t, const Tensor& var_t, T* dx,
                   T* dscale, T* doffset) {
  const int64_t channels = x_t.dim(3), rows = x_t.num_elements() / std::max<int64_t>(channels, 1);
  const T *dy = dy_t.data<T>(), *x = x_t.data<T>(), *mean = mean_t.data<T>();
  std::vector<T> inv_std(channels), sum_dy_xc(channels);
  for (int64_t c = 0; c < channels; ++c) {
    inv_std[c] = T(1) / std::sqrt(var_t.data<T>()[c] + static_cast<T>(a.epsilon));
  }
  // dx holds dy * (x - mean) until its sums are taken.
  for (int64_t r = 0; r < rows; ++r) {
    const T *dyr = dy + r * channels, *xr = x + r * channels;
    T* dxr = dx + r * channels;
    for (int64_t c = 0; c < channels; ++c) dxr[c] = dyr[c] * (xr[c] - mean[c]);
  }
  PairwiseColumnSums(dx, rows, channels, sum_dy_xc.data());
  PairwiseColumnSums(dy, rows, channels, doffset);
  for (int64_t c = 0; c < channels; ++c) dscale[c] = sum_dy_xc[c] * inv_std[c];
  std::vector<T> k(channels), mean_dy(channels), slope(channels);
  const T inv_rows = T(1) / static_cast<T>(std::max<int64_t>(rows, 1));
  for (int64_t c = 0; c < channels; ++c) {
    k[c] = scale.data<T>()[c] * inv_std[c];
    // Training: the batch statistics depend on x too, which takes the
    // gradient's mean and its projection on (x - mean) out of dy.
    mean_dy[c] = a.is_training ? doffset[c] * inv_rows : T(0);
    slope[c] = a.is_training ? sum_dy_xc[c] * inv_rows * inv_std[c] * inv_std[c] : T(0);
  }
  for (int64_t r = 0; r < rows; ++r) {
    const T *dyr = dy + r * channels, *xr = x + r * channels;
    T* dxr = dx + r * channels;
    if (!a.is_training) {
      // The statistics are constants: x's own value plays no part, so an
      // infinite or NaN x must not reach dx through (x - mean) * 0.
      for (int64_t c = 0; c < channels; ++c) dxr[c] = k[c] * dyr[c];
      continue;
    }
    for (int64_t c = 0; c < channels; ++c) {
      dxr[c] = k[c] * (dyr[c] - mean_dy[c] - (xr[c] - mean[c]) * slope[c]);
    }
  }
}

class FusedBatchNormGradOp : public OpKernel {
 public:
  explicit FusedBatchNormGradOp(OpKernelConstruction& c) : OpKernel(c) {
    auto a = BatchNormAttrsFrom(c.attrs(), /*forward=*/false);
    if (a.ok()) {
      attrs_ = *a;
    } else {
      c.SetStatus(a.status());
    }
  }

  void Compute(OpKernelContext& ctx) override {
    const Tensor& dy = ctx.input(0);
    const Tensor& x = ctx.input(1);
    TFD_OP_REQUIRES(ctx, x.rank() == 4 && dy.shape() == x.shape(),
                    errors::InvalidArgument("x must have rank 4 (NHWC) and y_backprop its "
                                            "shape, got x ",
                                            x.shape().ToString(), " and y_backprop ",
                                            dy.shape().ToString()));
    const int64_t channels = x.dim(3);
    const char* names[] = {"scale", "reserve_space_1", "reserve_space_2"};
    for (int i = 2; i <= 4; ++i) {
      TFD_OP_REQUIRES_OK(ctx, CheckChannelVector(ctx.input(i), channels, names[i - 2], false));
    }
    Tensor* outs[5];
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output_for_overwrite(0, x.shape(), &outs[0]));
    for (int i = 1; i < 3; ++i) {
      TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output_for_overwrite(i, TensorShape({channels}),
                                                                &outs[i]));
    }
    // TensorFlow's CPU kernel leaves these two empty.
    for (int i = 3; i < 5; ++i) {
      TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(i, TensorShape({0}), &outs[i]));
    }
    TFD_SWITCH_FLOAT(x.dtype(), T,
                     (BatchNormGrad<T>(attrs_, dy, x, ctx.input(2), ctx.input(3), ctx.input(4),
                                       outs[0]->data<T>(), outs[1]->data<T>(),
                                       outs[2]->data<T>())),
                     ctx.SetStatus(UnsupportedDType(x));
                     return;)
  }

 private:
  BatchNormAttrs attrs_;
};

// Input `i` must be a vector; its length merged into `channels` (-1: unknown).
Status MergeChannels(const InferenceContext& c, int i, bool may_be_empty, int64_t& channels) {
  TFD_RETURN_IF_ERROR(c.WithRank(i, 1));
  if (!c.input(i).rank_known() || c.input(i).dim(0) < 0) return OkStatus();
  const int64_t n = c.input(i).dim(0);
  if (may_be_empty && n == 0) return OkStatus();
  if (channels >= 0 && n != channels) {
    return errors::InvalidArgument("input ", i, " has ", n, " elements but x has ", channels,
                                   " channels");
  }
  channels = n;
  return OkStatus();
}

Status BatchNormShape(InferenceContext& c, bool forward) {
  TFD_ASSIGN_OR_RETURN(BatchNormAttrs a, BatchNormAttrsFrom(c.attrs(), forward));
  const int x = forward ? 0 : 1;
  TFD_RETURN_IF_ERROR(c.WithRank(x, 4));
  int64_t channels = c.input(x).rank_known() ? c.input(x).dim(3) : -1;
  const bool estimates_optional = forward && a.is_training && a.exponential_avg_factor == 1;
  for (int i = forward ? 1 : 2; i <= 4; ++i) {
    TFD_RETURN_IF_ERROR(MergeChannels(c, i, estimates_optional && i >= 3, channels));
  }
  PartialShape y = c.input(x).rank_known() ? c.input(x) : PartialShape::UnknownOfRank(4);
  if (channels >= 0) y = PartialShape({y.dim(0), y.dim(1), y.dim(2), channels});
  if (!forward) {
    auto merged = y.Merge(c.input(0));
    if (!merged.ok()) {
      return errors::InvalidArgument("y_backprop has shape ", c.input(0).ToString(),
                                     " but x has ", c.input(1).ToString());
    }
    y = *merged;
  }
  c.set_output(0, y);
  for (int i = 1; i < 5; ++i) {
    c.set_output(i, !forward && i >= 3 ? PartialShape({0}) : PartialShape({channels}));
  }
  return OkStatus();
}

constexpr const char* kAttrs[] = {"epsilon: float = 0.0001", "data_format: string = \"NHWC\"",
                                  "is_training: bool = true"};

}  // namespace

Status RegisterBatchNormOps(OpRegistry& r) {
  OpDefBuilder fwd("FusedBatchNorm");
  fwd.Input("x: T").Input("scale: T").Input("offset: T").Input("mean: T").Input("variance: T");
  fwd.Output("y: T").Output("batch_mean: T").Output("batch_variance: T");
  fwd.Output("reserve_space_1: T").Output("reserve_space_2: T").Attr(kFloatTypeAttr);
  for (const char* a : kAttrs) fwd.Attr(a);
  fwd.Attr("exponential_avg_factor: float = 1.0");
  fwd.Doc(
      "Batch normalization of x [batch, rows, cols, channels] (NHWC only): y = (x - mean) / "
      "sqrt(variance + epsilon) * scale + offset per channel. Training: the batch's mean and "
      "biased variance; batch_mean and batch_variance are (1 - exponential_avg_factor) * the "
      "given mean / variance + exponential_avg_factor * the batch's mean / unbiased variance "
      "(with the default factor 1 the given ones are not read and may be empty); "
      "reserve_space_1 and _2 are the batch's mean and biased variance, for "
      "FusedBatchNormGrad. Inference: the given mean and variance, passed through to all four. "
      "No rows give NaN statistics. Shape: y as x; the others [channels].");
  TFD_RETURN_IF_ERROR(r.Add<FusedBatchNormOp>(
      fwd, [](InferenceContext& c) { return BatchNormShape(c, /*forward=*/true); }));
  OpDefBuilder grad("FusedBatchNormGrad");
  grad.Input("y_backprop: T").Input("x: T").Input("scale: T");
  grad.Input("reserve_space_1: T").Input("reserve_space_2: T");
  grad.Output("x_backprop: T").Output("scale_backprop: T").Output("offset_backprop: T");
  grad.Output("reserve_space_3: T").Output("reserve_space_4: T").Attr(kFloatTypeAttr);
  for (const char* a : kAttrs) grad.Attr(a);
  grad.Doc(
      "Gradient of FusedBatchNorm's y with respect to x, scale and offset, from the mean and "
      "variance it used: reserve_space_1 and _2 of a training FusedBatchNorm (is_training), "
      "or the given mean and variance of an inference one. Shape: x_backprop as x; "
      "scale_backprop and offset_backprop [channels]; reserve_space_3 and _4 empty ([0]).");
  return r.Add<FusedBatchNormGradOp>(
      grad, [](InferenceContext& c) { return BatchNormShape(c, /*forward=*/false); });
}

}  // namespace tfd::kernels::nn
