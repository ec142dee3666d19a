// Forward activation kernels: Sigmoid, Tanh, Relu, Relu6, Elu, Softplus.
// All are element-wise on float32/float64 and keep their input's shape.
#include <cmath>

#include "common/op_kernel.h"
#include "common/tensor_eigen.h"
#include "kernels/math/ieee_functors.h"
#include "kernels/nn/nn_internal.h"

namespace tfd::kernels::nn {
namespace {

// Each functor writes f(x) into y; x and y have the same size.
struct SigmoidFn {
  template <typename T>
  static void Apply(const FlatMap<T>& x, FlatMap<T>& y) {
    // Never exponentiates a positive number: 1 / (1 + exp(-x)) would be 0
    // where the result is a denormal (x < -87 for float32).
    y = x.unaryExpr(ieee::SigmoidOp<T>());
  }
};

struct TanhFn {
  template <typename T>
  static void Apply(const FlatMap<T>& x, FlatMap<T>& y) {
    y = x.unaryExpr(ieee::TanhOp<T>());
  }
};

struct ReluFn {
  template <typename T>
  static void Apply(const FlatMap<T>& x, FlatMap<T>& y) {
    y = x.binaryExpr(x.Constant(x.size(), T(0)), ieee::MaxOp<T>());  // NaN stays NaN
  }
};

struct Relu6Fn {
  template <typename T>
  static void Apply(const FlatMap<T>& x, FlatMap<T>& y) {
    y = x.binaryExpr(x.Constant(x.size(), T(0)), ieee::MaxOp<T>())
            .binaryExpr(x.Constant(x.size(), T(6)), ieee::MinOp<T>());
  }
};

struct EluFn {
  template <typename T>
  static void Apply(const FlatMap<T>& x, FlatMap<T>& y) {
    // expm1 keeps full precision for small negative x, where exp(x) - 1
    // would cancel.
    y = x.unaryExpr([](T v) { return v < T(0) ? std::expm1(v) : v; });
  }
};

struct SoftplusFn {
  template <typename T>
  static void Apply(const FlatMap<T>& x, FlatMap<T>& y) {
    // log(1 + e^x) = max(x, 0) + log1p(e^-|x|): the exponent is never
    // positive, so nothing overflows for large |x|.
    y = x.unaryExpr([](T v) { return std::max(v, T(0)) + std::log1p(std::exp(-std::abs(v))); });
  }
};

template <typename F, typename T>
void ApplyUnary(const Tensor& x, Tensor& y) {
  FlatMap<T> in = EigenFlat<T>(x);
  FlatMap<T> out = EigenFlat<T>(y);
  F::template Apply<T>(in, out);
}

template <typename F>
class UnaryActivationOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor* y = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, x.shape(), &y));
    TFD_SWITCH_FLOAT(x.dtype(), T, (ApplyUnary<F, T>(x, *y)), ctx.SetStatus(UnsupportedDType(x));
                     return;)
  }
};

template <typename F>
Status AddUnary(OpRegistry& r, const char* name, const char* in, const char* out, const char* doc) {
  return r.Add<UnaryActivationOp<F>>(OpDefBuilder(name)
                                         .Input(std::string(in) + ": T")
                                         .Output(std::string(out) + ": T")
                                         .Attr(kFloatTypeAttr)
                                         .Doc(std::string(doc) + " Shape: unchanged."),
                                     shape_fns::UnchangedShape);
}

}  // namespace

Status RegisterActivationOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(AddUnary<SigmoidFn>(r, "Sigmoid", "x", "y",
                                          "Element-wise logistic function 1 / (1 + exp(-x))."));
  TFD_RETURN_IF_ERROR(AddUnary<TanhFn>(r, "Tanh", "x", "y", "Element-wise hyperbolic tangent."));
  TFD_RETURN_IF_ERROR(AddUnary<ReluFn>(r, "Relu", "features", "activations",
                                       "Element-wise rectified linear max(features, 0)."));
  TFD_RETURN_IF_ERROR(AddUnary<Relu6Fn>(r, "Relu6", "features", "activations",
                                        "Element-wise min(max(features, 0), 6)."));
  TFD_RETURN_IF_ERROR(AddUnary<EluFn>(
      r, "Elu", "features", "activations",
      "Element-wise exponential linear unit: exp(features) - 1 where features < 0, else "
      "features."));
  TFD_RETURN_IF_ERROR(AddUnary<SoftplusFn>(
      r, "Softplus", "features", "activations",
      "Element-wise log(exp(features) + 1), computed without overflow for large features."));
  return OkStatus();
}

}  // namespace tfd::kernels::nn
