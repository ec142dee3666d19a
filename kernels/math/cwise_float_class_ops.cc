// Rounding and classification of floats: Ceil, Round, IsInf, IsNan,
// IsFinite.
//
// Round is TensorFlow's (and numpy's) round-half-to-even: 0.5 -> 0,
// 1.5 -> 2, -2.5 -> -2, which is the processor's rounding instruction in the
// default rounding mode (Eigen's rint); on integers it is the identity. The
// classification ops map float32/float64 to bool.
#include <cmath>

#include "kernels/math/cwise_unary_kernel.h"
#include "kernels/math/grad_util.h"
#include "kernels/math/math_ops_internal.h"

namespace tfd::kernels {
namespace {

TFD_UNARY_FN(CeilFn, Domain::kFloat, a.ceil())
#undef TFD_UNARY_FN

struct RoundFn {
  static constexpr Domain kDomain = Domain::kSigned;
  static auto Apply(const auto& a) {
    using S = typename std::decay_t<decltype(a)>::Scalar;
    if constexpr (std::is_floating_point_v<S>) {
      return a.rint();
    } else {
      return a + S(0);  // an expression of a's kind, so both branches agree in form
    }
  }
};

// y = Fn::Test(x) element-wise, float32/float64 to bool.
template <typename Fn>
class ClassifyOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor* y = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, x.shape(), &y));
    bool* out = y->data<bool>();
    TFD_SWITCH_FLOAT(x.dtype(), T, {
      const T* in = x.data<T>();
      for (int64_t i = 0; i < x.num_elements(); ++i) out[i] = Fn::Test(in[i]);
    }, {
      ctx.SetStatus(errors::InvalidArgument(node().op, " does not support dtype ",
                                            DTypeName(x.dtype())));
    });
  }
};

struct IsInfFn {
  static bool Test(auto v) { return std::isinf(v); }
};
struct IsNanFn {
  static bool Test(auto v) { return std::isnan(v); }
};
struct IsFiniteFn {
  static bool Test(auto v) { return std::isfinite(v); }
};

template <typename Fn>
Status AddClassify(OpRegistry& r, const char* name, const char* doc) {
  return r.Add<ClassifyOp<Fn>>(OpDefBuilder(name)
                                   .Input("x: T")
                                   .Output("y: bool")
                                   .Attr("T: {float32, float64}")
                                   .Doc(std::string(doc) + " Shape: the shape of x."),
                               shape_fns::UnchangedShape);
}

}  // namespace

Status RegisterFloatClassOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(
      AddUnary<CeilFn>(r, "Ceil", "The smallest integer not less than x, element-wise."));
  TFD_RETURN_IF_ERROR(AddUnary<RoundFn>(
      r, "Round",
      "x rounded to the nearest integer element-wise, halves to the even neighbour "
      "(banker's rounding: 0.5 -> 0, 1.5 -> 2, -2.5 -> -2); integers unchanged."));
  TFD_RETURN_IF_ERROR(AddClassify<IsInfFn>(r, "IsInf", "Whether x is +inf or -inf, element-wise."));
  TFD_RETURN_IF_ERROR(AddClassify<IsNanFn>(r, "IsNan", "Whether x is NaN, element-wise."));
  TFD_RETURN_IF_ERROR(AddClassify<IsFiniteFn>(
      r, "IsFinite", "Whether x is neither inf nor NaN, element-wise."));
  // Piecewise constant or bool-valued: no gradient flows back (TensorFlow's
  // None and NotDifferentiable).
  for (const char* op : {"Ceil", "Round", "IsInf", "IsNan", "IsFinite"}) {
    TFD_RETURN_IF_ERROR(grad::Register(r, op, [](Scope&, const GradInputs&,
                                                 std::vector<Output>*) { return OkStatus(); }));
  }
  return OkStatus();
}

}  // namespace tfd::kernels
