// Cumsum: running sums along one axis (tf.cumsum, numpy.cumsum), with
// TensorFlow's attrs: exclusive (element k sums the elements before k, so
// the first is 0) and reverse (sums run from the end of the axis). Sums
// accumulate in the input's dtype, in order along the axis, as numpy's do;
// integers wrap. Its gradient is the cumsum of dy the other way round.
#include <cstdint>
#include <type_traits>

#include "common/op_kernel.h"
#include "kernels/math/grad_util.h"
#include "kernels/math/math_ops_internal.h"

namespace tfd::kernels {
namespace {

// The tensor as [outer, n, inner] around the summed axis.
struct AxisView {
  int64_t outer = 1, n = 1, inner = 1;
};

StatusOr<int> CheckedAxis(const Tensor& axis, int rank) {
  if (axis.rank() != 0) {
    return errors::InvalidArgument("Cumsum: axis must be a scalar, got shape ",
                                   axis.shape().ToString());
  }
  const int64_t a = axis.dtype() == DType::kInt32 ? axis.data<int32_t>()[0]
                                                  : axis.data<int64_t>()[0];
  if (a < -rank || a >= rank) {
    return errors::InvalidArgument("Cumsum: axis ", a, " is out of range for a tensor of rank ",
                                   rank, " (expected [", -rank, ", ", rank, "))");
  }
  return static_cast<int>(a < 0 ? a + rank : a);
}

template <typename T>
void RunningSums(const T* x, T* y, const AxisView& v, bool exclusive, bool reverse) {
  for (int64_t o = 0; o < v.outer; ++o) {
    const T* xo = x + o * v.n * v.inner;
    T* yo = y + o * v.n * v.inner;
    for (int64_t step = 0; step < v.n; ++step) {
      const int64_t k = reverse ? v.n - 1 - step : step;
      const int64_t prev = reverse ? k + 1 : k - 1;  // the row summed before k
      T* row = yo + k * v.inner;
      for (int64_t i = 0; i < v.inner; ++i) {
        if (step == 0) {
          row[i] = exclusive ? T(0) : xo[k * v.inner + i];
        } else {
          const T add = xo[(exclusive ? prev : k) * v.inner + i];
          if constexpr (std::is_integral_v<T>) {  // wraps, as numpy's
            using U = std::make_unsigned_t<T>;
            row[i] = static_cast<T>(U(yo[prev * v.inner + i]) + U(add));
          } else {
            row[i] = yo[prev * v.inner + i] + add;
          }
        }
      }
    }
  }
}

class CumsumOp : public OpKernel {
 public:
  explicit CumsumOp(OpKernelConstruction& c) : OpKernel(c) {
    c.SetStatus(c.GetAttr("exclusive", &exclusive_));
    c.SetStatus(c.GetAttr("reverse", &reverse_));
  }

  void Compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    StatusOr<int> axis = CheckedAxis(ctx.input(1), x.rank());
    TFD_OP_REQUIRES_OK(ctx, axis.status());
    Tensor* y = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, x.shape(), &y));
    AxisView v;
    for (int d = 0; d < x.rank(); ++d) {
      const int64_t size = x.shape().dim(d);
      if (d < *axis) v.outer *= size;
      if (d == *axis) v.n = size;
      if (d > *axis) v.inner *= size;
    }
    if (x.num_elements() == 0) return;
    TFD_SWITCH_NUMERIC(x.dtype(), T,
                       (RunningSums(x.data<T>(), y->data<T>(), v, exclusive_, reverse_)), {});
  }

 private:
  bool exclusive_ = false, reverse_ = false;
};

Status CumsumShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(c.WithRank(1, 0));
  const Tensor* axis = c.input_value(1);
  if (axis != nullptr && c.input(0).rank_known()) {
    TFD_RETURN_IF_ERROR(CheckedAxis(*axis, c.input(0).rank()).status());
  }
  c.set_output(0, c.input(0));
  return OkStatus();
}

// TensorFlow's _CumsumGrad: the sums that x[k] entered are those at k and
// after (before, when reversed), so dx is dy summed the other way.
Status CumsumGrad(Scope& s, const GradInputs& in, std::vector<Output>* dx) {
  TFD_ASSIGN_OR_RETURN(bool exclusive, in.GetAttr<bool>("exclusive"));
  TFD_ASSIGN_OR_RETURN(bool reverse, in.GetAttr<bool>("reverse"));
  (*dx)[0] = grad::Op(s, "Cumsum", {in.dy[0], in.inputs[1]},
                      {{"exclusive", exclusive}, {"reverse", !reverse}});
  return OkStatus();
}

}  // namespace

Status RegisterCumsumOp(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<CumsumOp>(
      OpDefBuilder("Cumsum")
          .Input("x: T")
          .Input("axis: Tidx")
          .Output("out: T")
          .Attr("exclusive: bool = false")
          .Attr("reverse: bool = false")
          .Attr("T: {float32, float64, int32, int64}")
          .Attr("Tidx: {int32, int64} = int32")
          .Doc("Running sums of x along axis (a scalar in [-rank, rank)): out[k] = x[0] + ... "
               "+ x[k]; with exclusive, x[0] + ... + x[k-1] (0 first); with reverse, the sums "
               "run from the last element. Shape: x's shape."),
      CumsumShape));
  return grad::Register(r, "Cumsum", CumsumGrad);
}

}  // namespace tfd::kernels
