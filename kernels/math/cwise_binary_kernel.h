// BinaryOp<Fn>: the one kernel behind every broadcasting element-wise binary
// op of the math family. It checks nothing an op spec has not already fixed
// (x and y share dtype T), broadcasts with BroadcastPlan and lets the functor
// supply the Eigen expression.
//
// A functor Fn provides
//   static constexpr bool kBoolOutput;                  // z is bool, not T
//   template <class T> static constexpr bool Supports();  // dtypes compiled
//   template <class T> static Status Check(const Tensor& x, const Tensor& y);
//   template <class T> static auto Apply(const auto& a, const auto& b);
// Check runs before the arithmetic, only when the output is non-empty, and is
// where value-dependent errors (integer division by zero) are caught.
//
//   r.Add<BinaryOp<AddFn>>(OpDefBuilder("Add")..., shape_fns::BroadcastBinary);
#pragma once

#include <type_traits>

#include "common/op_kernel.h"
#include "kernels/math/broadcast.h"

namespace tfd::kernels {

// Plain numbers: every numeric dtype but bool.
template <typename T>
inline constexpr bool kIsNumber = std::is_arithmetic_v<T> && !std::is_same_v<T, bool>;

// Defaults for functors: numeric dtypes, T output, no value checks.
struct NumericBinaryFn {
  static constexpr bool kBoolOutput = false;
  template <typename T>
  static constexpr bool Supports() {
    return kIsNumber<T>;
  }
  template <typename T>
  static Status Check(const Tensor&, const Tensor&) {
    return OkStatus();
  }
};

// INVALID_ARGUMENT at the first zero of an integer divisor y, which would
// trap; OK for float divisors, where x / 0 is inf or NaN by IEEE.
template <typename T>
Status CheckIntegerDivisor(const Tensor& y) {
  if constexpr (std::is_integral_v<T>) {
    const T* d = y.data<T>();
    for (int64_t i = 0; i < y.num_elements(); ++i) {
      if (d[i] == 0) {
        return errors::InvalidArgument("Integer division by zero: divisor y (shape ",
                                       y.shape().ToString(), ") has a zero at flat index ", i);
      }
    }
  }
  return OkStatus();
}

template <typename Fn>
class BinaryOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& y = ctx.input(1);
    auto plan = BroadcastPlan::Make(x.shape(), y.shape());
    TFD_OP_REQUIRES_OK(ctx, plan.status());
    Tensor* z = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, plan->output_shape(), &z));
    Status s;
    TFD_SWITCH_POD(x.dtype(), T, { s = Run<T>(*plan, x, y, *z); },
                   { s = Unsupported(x.dtype()); });
    ctx.SetStatus(s);
  }

 private:
  Status Unsupported(DType d) const {
    return errors::InvalidArgument(node().op, " does not support dtype ", DTypeName(d));
  }

  template <typename T>
  Status Run(const BroadcastPlan& plan, const Tensor& x, const Tensor& y, Tensor& z) const {
    if constexpr (!Fn::template Supports<T>()) {
      return Unsupported(x.dtype());
    } else {
      if (plan.output_shape().num_elements() == 0) return OkStatus();
      TFD_RETURN_IF_ERROR(Fn::template Check<T>(x, y));
      using Out = std::conditional_t<Fn::kBoolOutput, bool, T>;
      ApplyBroadcast<T, Out>(plan, x.data<T>(), y.data<T>(), z.data<Out>(),
                             [](const auto& a, const auto& b) { return Fn::template Apply<T>(a, b); });
      return OkStatus();
    }
  }
};

}  // namespace tfd::kernels
