// Element-wise unary ops: Neg, Square, Sqrt, Rsqrt, Exp, Log, Abs,
// LogicalNot, Reciprocal, Sign, Floor. Each is one Eigen array expression;
// where Eigen's stock form is not IEEE, with a functor of ieee_functors.h.
#include <type_traits>

#include "common/op_kernel.h"
#include "common/tensor_eigen.h"
#include "kernels/math/ieee_functors.h"
#include "kernels/math/math_ops_internal.h"

namespace tfd::kernels {
namespace {

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

// Fn provides `static constexpr Domain kDomain` and `static auto Apply(a)`.
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

// EXPR may name the element type as S.
#define TFD_UNARY_FN(NAME, DOMAIN, EXPR)                                       \
  struct NAME {                                                                \
    static constexpr Domain kDomain = DOMAIN;                                  \
    static auto Apply(const auto& a) {                                         \
      using S [[maybe_unused]] = typename std::decay_t<decltype(a)>::Scalar;   \
      return EXPR;                                                             \
    }                                                                          \
  };

TFD_UNARY_FN(NegFn, Domain::kSigned, a.unaryExpr(ieee::NegOp<S>()))
TFD_UNARY_FN(SquareFn, Domain::kSigned, a.square())
TFD_UNARY_FN(SqrtFn, Domain::kFloat, a.unaryExpr(ieee::SqrtOp<S>()))
TFD_UNARY_FN(RsqrtFn, Domain::kFloat, a.unaryExpr(ieee::RsqrtOp<S>()))
TFD_UNARY_FN(ExpFn, Domain::kFloat, a.unaryExpr(ieee::ExpOp<S>()))
TFD_UNARY_FN(LogFn, Domain::kFloat, a.unaryExpr(ieee::LogOp<S>()))
TFD_UNARY_FN(AbsFn, Domain::kSigned, a.abs())
TFD_UNARY_FN(LogicalNotFn, Domain::kBool, !a)
TFD_UNARY_FN(ReciprocalFn, Domain::kFloat, a.inverse())
TFD_UNARY_FN(SignFn, Domain::kSigned, a.sign())
TFD_UNARY_FN(FloorFn, Domain::kFloat, a.floor())
#undef TFD_UNARY_FN

template <typename Fn>
Status AddUnary(OpRegistry& r, const char* name, const char* doc) {
  OpDefBuilder def(name);
  if constexpr (Fn::kDomain == Domain::kBool) {
    def.Input("x: bool").Output("y: bool");
  } else {
    def.Input("x: T").Output("y: T");
    def.Attr(Fn::kDomain == Domain::kFloat ? "T: {float32, float64}"
                                           : "T: {float32, float64, int32, int64}");
  }
  def.Doc(std::string(doc) + " Shape: the shape of x.");
  return r.Add<UnaryOp<Fn>>(def, shape_fns::UnchangedShape);
}

}  // namespace

Status RegisterUnaryOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(AddUnary<NegFn>(r, "Neg", "-x element-wise."));
  TFD_RETURN_IF_ERROR(AddUnary<SquareFn>(r, "Square", "x * x element-wise."));
  TFD_RETURN_IF_ERROR(AddUnary<SqrtFn>(r, "Sqrt", "The square root of x element-wise."));
  TFD_RETURN_IF_ERROR(AddUnary<RsqrtFn>(r, "Rsqrt", "1 / sqrt(x) element-wise."));
  TFD_RETURN_IF_ERROR(AddUnary<ExpFn>(r, "Exp", "e^x element-wise."));
  TFD_RETURN_IF_ERROR(AddUnary<LogFn>(r, "Log", "The natural logarithm of x element-wise."));
  TFD_RETURN_IF_ERROR(AddUnary<AbsFn>(r, "Abs", "|x| element-wise."));
  TFD_RETURN_IF_ERROR(AddUnary<LogicalNotFn>(r, "LogicalNot", "NOT x element-wise."));
  TFD_RETURN_IF_ERROR(AddUnary<ReciprocalFn>(r, "Reciprocal", "1 / x element-wise."));
  TFD_RETURN_IF_ERROR(
      AddUnary<SignFn>(r, "Sign", "-1, 0 or 1 by the sign of x element-wise."));
  TFD_RETURN_IF_ERROR(
      AddUnary<FloorFn>(r, "Floor", "The largest integer not greater than x, element-wise."));
  return OkStatus();
}

}  // namespace tfd::kernels
