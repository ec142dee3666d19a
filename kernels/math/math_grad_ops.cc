// Ops that gradient graphs are built from: BroadcastGradientArgs (which axes
// to sum a broadcast op's gradient over) and the derivative ops SqrtGrad,
// RsqrtGrad, ReciprocalGrad, which take the forward output y (not x).
#include <type_traits>

#include "common/op_kernel.h"
#include "common/tensor_eigen.h"
#include "kernels/math/broadcast.h"
#include "kernels/math/ieee_functors.h"
#include "kernels/math/math_ops_internal.h"

namespace tfd::kernels {
namespace {

template <typename T>
StatusOr<TensorShape> ShapeFromVector(const Tensor& t, const char* name) {
  if (t.rank() != 1) {
    return errors::InvalidArgument(name, " must be a vector (a shape), got shape ",
                                   t.shape().ToString());
  }
  std::vector<int64_t> dims(t.data<T>(), t.data<T>() + t.num_elements());
  auto shape = TensorShape::Make(dims);
  if (!shape.ok()) return shape.status().WithContext(std::string(name) + ": ");
  return shape;
}

class BroadcastGradientArgsOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext& ctx) override {
    Status s;
    switch (ctx.input(0).dtype()) {
      case DType::kInt32: s = Run<int32_t>(ctx); break;
      case DType::kInt64: s = Run<int64_t>(ctx); break;
      default:
        s = errors::InvalidArgument("BroadcastGradientArgs takes int32 or int64 shapes, got ",
                                    DTypeName(ctx.input(0).dtype()));
    }
    ctx.SetStatus(s);
  }

 private:
  template <typename T>
  static Status Run(OpKernelContext& ctx) {
    TFD_ASSIGN_OR_RETURN(TensorShape s0, ShapeFromVector<T>(ctx.input(0), "s0"));
    TFD_ASSIGN_OR_RETURN(TensorShape s1, ShapeFromVector<T>(ctx.input(1), "s1"));
    TFD_ASSIGN_OR_RETURN(BroadcastPlan plan, BroadcastPlan::Make(s0, s1));
    const std::vector<int64_t>* axes[2] = {&plan.x_reduce_axes(), &plan.y_reduce_axes()};
    for (int i = 0; i < 2; ++i) {
      Tensor* out = nullptr;
      const int64_t n = static_cast<int64_t>(axes[i]->size());
      TFD_RETURN_IF_ERROR(ctx.allocate_output(i, TensorShape({n}), &out));
      for (int64_t k = 0; k < n; ++k) out->data<T>()[k] = static_cast<T>((*axes[i])[k]);
    }
    return OkStatus();
  }
};

Status BroadcastGradientArgsShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(c.WithRank(0, 1));
  TFD_RETURN_IF_ERROR(c.WithRank(1, 1));
  auto s0 = c.InputAsInts(0), s1 = c.InputAsInts(1);
  if (s0 && s1) {
    auto a = TensorShape::Make(*s0), b = TensorShape::Make(*s1);
    if (!a.ok()) return a.status().WithContext("s0 (input 0): ");
    if (!b.ok()) return b.status().WithContext("s1 (input 1): ");
    TFD_ASSIGN_OR_RETURN(BroadcastPlan plan, BroadcastPlan::Make(*a, *b));
    c.set_output(0, PartialShape({static_cast<int64_t>(plan.x_reduce_axes().size())}));
    c.set_output(1, PartialShape({static_cast<int64_t>(plan.y_reduce_axes().size())}));
    return OkStatus();
  }
  c.set_output(0, PartialShape({-1}));
  c.set_output(1, PartialShape({-1}));
  return OkStatus();
}

// z = f(y, dy) element-wise, y and dy of one shape.
template <typename Fn>
class UnaryGradOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext& ctx) override {
    const Tensor& y = ctx.input(0);
    const Tensor& dy = ctx.input(1);
    TFD_OP_REQUIRES(ctx, y.shape() == dy.shape(),
                    errors::InvalidArgument("y and dy must have the same shape, but y is ",
                                            y.shape().ToString(), " and dy is ",
                                            dy.shape().ToString()));
    Tensor* z = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, y.shape(), &z));
    TFD_SWITCH_FLOAT(y.dtype(), T, { EigenFlat<T>(*z) = Fn::Apply(EigenFlat<T>(y), EigenFlat<T>(dy)); },
                     { ctx.SetStatus(errors::InvalidArgument(node().op, " does not support dtype ",
                                                             DTypeName(y.dtype()))); });
  }
};

// d sqrt(x) = 1 / (2 sqrt(x)) = 0.5 / y
template <typename E>
using ScalarOf = typename std::decay_t<E>::Scalar;

struct SqrtGradFn {
  static auto Apply(const auto& y, const auto& dy) {
    return dy * ScalarOf<decltype(y)>(0.5) / y;
  }
};
// d x^-1/2 = -1/2 x^-3/2 = -0.5 y^3
struct RsqrtGradFn {
  static auto Apply(const auto& y, const auto& dy) {
    return dy * ScalarOf<decltype(y)>(-0.5) * y.cube();
  }
};
// d 1/x = -1/x^2 = -y^2
struct ReciprocalGradFn {
  static auto Apply(const auto& y, const auto& dy) {
    return dy.unaryExpr(ieee::NegOp<ScalarOf<decltype(y)>>()) * y.square();
  }
};

Status SameShapeBinary(InferenceContext& c) {
  auto merged = c.input(0).Merge(c.input(1));
  if (!merged.ok()) {
    return errors::InvalidArgument("y (input 0) and dy (input 1) must have the same shape, got ",
                                   c.input(0).ToString(), " and ", c.input(1).ToString());
  }
  c.set_output(0, *merged);
  return OkStatus();
}

template <typename Fn>
Status AddUnaryGrad(OpRegistry& r, const char* name, const char* formula) {
  return r.Add<UnaryGradOp<Fn>>(OpDefBuilder(name)
                                    .Input("y: T")
                                    .Input("dy: T")
                                    .Output("z: T")
                                    .Attr("T: {float32, float64}")
                                    .Doc(std::string("The gradient of the forward op given its "
                                                     "output y and the incoming gradient dy: ") +
                                         formula + ". Shape: that of y, which must equal dy's."),
                                SameShapeBinary);
}

}  // namespace

Status RegisterMathGradOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<BroadcastGradientArgsOp>(
      OpDefBuilder("BroadcastGradientArgs")
          .Input("s0: T")
          .Input("s1: T")
          .Output("r0: T")
          .Output("r1: T")
          .Attr("T: {int32, int64} = int32")
          .Doc("For a binary op broadcasting shapes s0 and s1: the axes of the output, "
               "ascending, that its gradient must be summed over to give the gradient of the "
               "first (r0) and second (r1) input. Shape: s0 and s1 are vectors; r0 and r1 "
               "are vectors."),
      BroadcastGradientArgsShape));
  TFD_RETURN_IF_ERROR(AddUnaryGrad<SqrtGradFn>(r, "SqrtGrad", "z = dy * 0.5 / y"));
  TFD_RETURN_IF_ERROR(AddUnaryGrad<RsqrtGradFn>(r, "RsqrtGrad", "z = dy * -0.5 * y^3"));
  TFD_RETURN_IF_ERROR(AddUnaryGrad<ReciprocalGradFn>(r, "ReciprocalGrad", "z = -dy * y^2"));
  return OkStatus();
}

}  // namespace tfd::kernels
