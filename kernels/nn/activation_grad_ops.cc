// Gradient kernels of the activations: SigmoidGrad, TanhGrad, ReluGrad,
// Relu6Grad, EluGrad, SoftplusGrad. Each takes the upstream gradient and
// what the forward op saw or produced (input order as in TensorFlow), and
// returns the gradient with respect to the forward op's input.
#include <cmath>

#include "common/op_kernel.h"
#include "common/tensor_eigen.h"
#include "kernels/math/ieee_functors.h"
#include "kernels/nn/nn_internal.h"

namespace tfd::kernels::nn {
namespace {

// Each functor computes out from the op's inputs a and b, in declared order.
struct SigmoidGradFn {  // a = y = sigmoid(x), b = dy
  template <typename T>
  static void Apply(const FlatMap<T>& y, const FlatMap<T>& dy, FlatMap<T>& out) {
    out = dy * y * (T(1) - y);
  }
};

struct TanhGradFn {  // a = y = tanh(x), b = dy
  template <typename T>
  static void Apply(const FlatMap<T>& y, const FlatMap<T>& dy, FlatMap<T>& out) {
    out = dy * (T(1) - y * y);
  }
};

struct ReluGradFn {  // a = gradients, b = features
  template <typename T>
  static void Apply(const FlatMap<T>& g, const FlatMap<T>& x, FlatMap<T>& out) {
    // At exactly 0 the derivative is taken as 0, as TensorFlow does.
    out = (x > T(0)).select(g, T(0));
  }
};

struct Relu6GradFn {  // a = gradients, b = features
  template <typename T>
  static void Apply(const FlatMap<T>& g, const FlatMap<T>& x, FlatMap<T>& out) {
    out = (x > T(0) && x < T(6)).select(g, T(0));
  }
};

struct EluGradFn {  // a = gradients, b = outputs of Elu (not its features)
  template <typename T>
  static void Apply(const FlatMap<T>& g, const FlatMap<T>& y, FlatMap<T>& out) {
    // For features < 0, y = exp(x) - 1 so d/dx = exp(x) = y + 1.
    out = (y < T(0)).select(g * (y + T(1)), g);
  }
};

struct SoftplusGradFn {  // a = gradients, b = features
  template <typename T>
  static void Apply(const FlatMap<T>& g, const FlatMap<T>& x, FlatMap<T>& out) {
    // d/dx log(1 + e^x) = sigmoid(x); an overflowing exp(-x) yields 0.
    out = g / (T(1) + (-x).unaryExpr(ieee::ExpOp<T>()));
  }
};

template <typename F, typename T>
void ApplyBinary(const Tensor& a, const Tensor& b, Tensor& out) {
  FlatMap<T> out_map = EigenFlat<T>(out);
  F::template Apply<T>(EigenFlat<T>(a), EigenFlat<T>(b), out_map);
}

template <typename F>
class ActivationGradOp : public OpKernel {
 public:
  explicit ActivationGradOp(OpKernelConstruction& c)
      : OpKernel(c), a_name_(c.def().inputs[0].name), b_name_(c.def().inputs[1].name) {}

  void Compute(OpKernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    TFD_OP_REQUIRES(
        ctx, a.shape() == b.shape(),
        errors::InvalidArgument(a_name_, " and ", b_name_, " must have the same shape, got ",
                                a.shape().ToString(), " and ", b.shape().ToString()));
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, a.shape(), &out));
    TFD_SWITCH_FLOAT(
        a.dtype(), T, (ApplyBinary<F, T>(a, b, *out)), ctx.SetStatus(UnsupportedDType(a)); return;)
  }

 private:
  std::string a_name_, b_name_;
};

template <typename F>
Status AddGrad(OpRegistry& r, const char* name, const char* a, const char* b, const char* out,
               const char* doc) {
  return r.Add<ActivationGradOp<F>>(
      OpDefBuilder(name)
          .Input(std::string(a) + ": T")
          .Input(std::string(b) + ": T")
          .Output(std::string(out) + ": T")
          .Attr(kFloatTypeAttr)
          .Doc(std::string(doc) + " Shape: that of both inputs, which must agree."),
      MergedInputsShape);
}

}  // namespace

Status RegisterActivationGradOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(AddGrad<SigmoidGradFn>(
      r, "SigmoidGrad", "y", "dy", "z",
      "Gradient of Sigmoid given its output y and upstream gradient dy: dy * y * (1 - y)."));
  TFD_RETURN_IF_ERROR(AddGrad<TanhGradFn>(
      r, "TanhGrad", "y", "dy", "z",
      "Gradient of Tanh given its output y and upstream gradient dy: dy * (1 - y^2)."));
  TFD_RETURN_IF_ERROR(
      AddGrad<ReluGradFn>(r, "ReluGrad", "gradients", "features", "backprops",
                          "Gradient of Relu: gradients where features > 0, else 0."));
  TFD_RETURN_IF_ERROR(
      AddGrad<Relu6GradFn>(r, "Relu6Grad", "gradients", "features", "backprops",
                           "Gradient of Relu6: gradients where 0 < features < 6, else 0."));
  TFD_RETURN_IF_ERROR(AddGrad<EluGradFn>(
      r, "EluGrad", "gradients", "outputs", "backprops",
      "Gradient of Elu given its outputs: gradients * (outputs + 1) where outputs < 0, else "
      "gradients."));
  TFD_RETURN_IF_ERROR(
      AddGrad<SoftplusGradFn>(r, "SoftplusGrad", "gradients", "features", "backprops",
                              "Gradient of Softplus: gradients / (1 + exp(-features))."));
  return OkStatus();
}

}  // namespace tfd::kernels::nn
