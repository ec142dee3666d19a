// LeakyRelu and Selu, their derivative ops LeakyReluGrad and SeluGrad, and
// the gradient functions of all four (TensorFlow's nn_grad.py), on float32
// and float64.
//
// Each selects between two branches by a comparison that NaN fails, so a NaN
// input gives NaN from the other branch's arithmetic; -0 stays -0 (-0 * alpha).
#include <cmath>
#include <utility>
#include <vector>

#include "common/op_kernel.h"
#include "kernels/math/grad_util.h"
#include "kernels/nn/nn_internal.h"

namespace tfd::kernels::nn {
namespace {

// Selu's constants (Klambauer et al. 2017), as TensorFlow's kernel has them.
constexpr double kSeluScale = 1.0507009873554804934193349852946;
constexpr double kSeluScaleAlpha = 1.7580993408473768599402175208123;  // scale * alpha

struct LeakyReluFn {  // (features)
  template <typename T>
  static T Apply(T x, T, T alpha) { return x > T(0) ? x : x * alpha; }
};
struct LeakyReluGradFn {  // (gradients, features)
  template <typename T>
  static T Apply(T g, T x, T alpha) { return x > T(0) ? g : g * alpha; }
};
struct SeluFn {  // (features); expm1 keeps precision where e^x - 1 cancels
  template <typename T>
  static T Apply(T x, T, T) {
    return x < T(0) ? T(kSeluScaleAlpha) * std::expm1(x) : T(kSeluScale) * x;
  }
};
struct SeluGradFn {  // (gradients, outputs): for x < 0, d/dx = y + scale * alpha
  template <typename T>
  static T Apply(T g, T y, T) {
    return y < T(0) ? g * (y + T(kSeluScaleAlpha)) : g * T(kSeluScale);
  }
};

// out = Fn::Apply(a, b, alpha) element-wise over one or two same-shaped
// inputs; alpha is the op's attr where it has one.
template <typename Fn, int kInputs>
class PiecewiseOp : public OpKernel {
 public:
  explicit PiecewiseOp(OpKernelConstruction& c) : OpKernel(c) {
    if (c.attrs().count("alpha")) c.SetStatus(c.GetAttr("alpha", &alpha_));
  }

  void Compute(OpKernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(kInputs - 1);
    TFD_OP_REQUIRES(ctx, a.shape() == b.shape(),
                    errors::InvalidArgument(node().op, " '", name(),
                                            "': both inputs must have one shape, got ",
                                            a.shape().ToString(), " and ", b.shape().ToString()));
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, a.shape(), &out));
    TFD_SWITCH_FLOAT(a.dtype(), T, (Run<T>(a, b, *out)), ctx.SetStatus(UnsupportedDType(a)););
  }

 private:
  template <typename T>
  void Run(const Tensor& a, const Tensor& b, Tensor& out) const {
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* po = out.data<T>();
    const T alpha = static_cast<T>(alpha_);
    for (int64_t i = 0; i < a.num_elements(); ++i) po[i] = Fn::Apply(pa[i], pb[i], alpha);
  }

  double alpha_ = 0;
};

constexpr const char* kAlphaAttr = "alpha: float = 0.2";

Status RegisterForwardOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR((r.Add<PiecewiseOp<LeakyReluFn, 1>>(
      OpDefBuilder("LeakyRelu").Input("features: T").Output("activations: T")
          .Attr(kAlphaAttr).Attr(kFloatTypeAttr)
          .Doc("Leaky rectified linear unit: features where features > 0, else "
               "alpha * features. Shape: unchanged."),
      shape_fns::UnchangedShape)));
  TFD_RETURN_IF_ERROR((r.Add<PiecewiseOp<LeakyReluGradFn, 2>>(
      OpDefBuilder("LeakyReluGrad").Input("gradients: T").Input("features: T")
          .Output("backprops: T").Attr(kAlphaAttr).Attr(kFloatTypeAttr)
          .Doc("Gradient of LeakyRelu: gradients where features > 0, else alpha * gradients. "
               "Shape: that of both inputs, which must agree."),
      MergedInputsShape)));
  TFD_RETURN_IF_ERROR((r.Add<PiecewiseOp<SeluFn, 1>>(
      OpDefBuilder("Selu").Input("features: T").Output("activations: T").Attr(kFloatTypeAttr)
          .Doc("Scaled exponential linear unit: scale * features where features >= 0, else "
               "scale * alpha * (exp(features) - 1), with scale = 1.0507009873554805 and "
               "alpha = 1.6732632423543772. Shape: unchanged."),
      shape_fns::UnchangedShape)));
  return r.Add<PiecewiseOp<SeluGradFn, 2>>(
      OpDefBuilder("SeluGrad").Input("gradients: T").Input("outputs: T")
          .Output("backprops: T").Attr(kFloatTypeAttr)
          .Doc("Gradient of Selu given its outputs: gradients * (outputs + scale * alpha) "
               "where outputs < 0, else gradients * scale. Shape: that of both inputs, which "
               "must agree."),
      MergedInputsShape);
}

using Dx = std::vector<Output>;

Status LeakyReluGradient(Scope& s, const GradInputs& in, Dx* dx) {
  TFD_ASSIGN_OR_RETURN(double alpha, in.GetAttr<double>("alpha"));
  (*dx)[0] = grad::Op(s, "LeakyReluGrad", {in.dy[0], in.inputs[0]}, {{"alpha", alpha}});
  return OkStatus();
}

// LeakyReluGrad is linear in gradients; its features only pick the branch.
Status LeakyReluGradGradient(Scope& s, const GradInputs& in, Dx* dx) {
  TFD_ASSIGN_OR_RETURN(double alpha, in.GetAttr<double>("alpha"));
  (*dx)[0] = grad::Op(s, "LeakyReluGrad", {in.dy[0], in.inputs[1]}, {{"alpha", alpha}});
  (*dx)[1] = grad::ZerosLike(s, in.inputs[1]);
  return OkStatus();
}

Status SeluGradient(Scope& s, const GradInputs& in, Dx* dx) {
  (*dx)[0] = grad::Op(s, "SeluGrad", {in.dy[0], in.outputs[0]});
  return OkStatus();
}

// d/d gradients = SeluGrad(dz, outputs); d/d outputs = dz * gradients where
// outputs < 0, else 0.
Status SeluGradGradient(Scope& s, const GradInputs& in, Dx* dx) {
  const Output &g = in.inputs[0], &y = in.inputs[1], &dz = in.dy[0];
  (*dx)[0] = grad::Op(s, "SeluGrad", {dz, y});
  const Output negative = grad::Op(s, "Less", {y, grad::ScalarLike(s, 0, y)});
  (*dx)[1] = grad::Op(s, "Select", {negative, grad::Mul(s, dz, g), grad::ZerosLike(s, g)});
  return OkStatus();
}

}  // namespace

Status RegisterLeakySeluOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(RegisterForwardOps(r));
  const std::pair<const char*, GradFn> gradients[] = {
      {"LeakyRelu", LeakyReluGradient},
      {"LeakyReluGrad", LeakyReluGradGradient},
      {"Selu", SeluGradient},
      {"SeluGrad", SeluGradGradient},
  };
  for (const auto& [op, fn] : gradients) TFD_RETURN_IF_ERROR(grad::Register(r, op, fn));
  return OkStatus();
}

}  // namespace tfd::kernels::nn
