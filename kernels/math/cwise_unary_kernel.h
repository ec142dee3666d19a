// UnaryOp<Fn>: the one kernel behind the math family's element-wise unary
// ops whose output has the input's dtype and shape (cwise_unary_ops.cc,
// cwise_trig_ops.cc, cwise_float_class_ops.cc). The functor supplies the
// Eigen expression and the dtypes it is compiled for; AddUnary registers the
// op with the matching attr set.
//
// A functor Fn provides
//   static constexpr Domain kDomain;            // which dtypes: the op's attr set
//   static auto Apply(const auto& a);           // an Eigen array expression
//
//   TFD_RETURN_IF_ERROR(AddUnary<SinFn>(r, "Sin", "sin(x) element-wise."));
//
// Thread-safety: kernels are stateless.
#pragma once

#include <string>
#include <type_traits>

#include "common/op_kernel.h"
#include "common/tensor_eigen.h"

namespace tfd::kernels {

// Which dtypes a functor is compiled for; must match the op's attr set.
enum class Domain { kFloat, kSigned, kBool };

template <Domain D, typename T>
constexpr bool InDomain() {
  if constexpr (D == Domain::kBool) {
    return std::is_same_v<T, bool>;
  } else if constexpr (D == Domain::kFloat) {
    return std::is_floating_point_v<T>;
  } else {
    return std::is_signed_v<T> && !std::is_same_v<T, bool>;
  }
}

template <typename Fn>
class UnaryOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor* y = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, x.shape(), &y));
    bool supported = false;
    TFD_SWITCH_POD(x.dtype(), T, {
      if constexpr (InDomain<Fn::kDomain, T>()) {
        EigenFlat<T>(*y) = Fn::Apply(EigenFlat<T>(x));
        supported = true;
      }
    }, {});
    TFD_OP_REQUIRES(ctx, supported,
                    errors::InvalidArgument(node().op, " does not support dtype ",
                                            DTypeName(x.dtype())));
  }
};

// Defines a functor for UnaryOp; EXPR may name the element type as S.
#define TFD_UNARY_FN(NAME, DOMAIN, EXPR)                                       \
  struct NAME {                                                                \
    static constexpr Domain kDomain = DOMAIN;                                  \
    static auto Apply(const auto& a) {                                         \
      using S [[maybe_unused]] = typename std::decay_t<decltype(a)>::Scalar;   \
      return EXPR;                                                             \
    }                                                                          \
  };

template <typename Fn>
Status AddUnary(OpRegistry& r, const char* name, const std::string& doc) {
  OpDefBuilder def(name);
  if constexpr (Fn::kDomain == Domain::kBool) {
    def.Input("x: bool").Output("y: bool");
  } else {
    def.Input("x: T").Output("y: T");
    def.Attr(Fn::kDomain == Domain::kFloat ? "T: {float32, float64}"
                                           : "T: {float32, float64, int32, int64}");
  }
  def.Doc(doc + " Shape: the shape of x.");
  return r.Add<UnaryOp<Fn>>(def, shape_fns::UnchangedShape);
}

}  // namespace tfd::kernels
