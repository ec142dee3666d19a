// Range: the sequence start, start + delta, ... up to but excluding limit
// (tf.range, numpy.arange), for int32, int64, float32 and float64. Element i
// is start + i * delta, as numpy's (not a running sum, whose float error
// grows with i). A delta of 0, or one that points away from limit, is
// INVALID_ARGUMENT, as in TensorFlow; start == limit gives an empty vector.
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "common/op_kernel.h"
#include "kernels/math/math_ops_internal.h"

namespace tfd::kernels {
namespace {

// Element counts past this are refused before anything is allocated.
constexpr int64_t kMaxRange = int64_t{1} << 48;

// The number of elements, or INVALID_ARGUMENT for a bad delta or a range
// too long to hold.
template <typename T>
StatusOr<int64_t> RangeSize(T start, T limit, T delta) {
  if (delta == 0) return errors::InvalidArgument("Range: requires delta != 0, got 0");
  if (delta > 0 && start > limit) {
    return errors::InvalidArgument("Range: requires start <= limit when delta > 0, got start ",
                                   start, " and limit ", limit);
  }
  if (delta < 0 && start < limit) {
    return errors::InvalidArgument("Range: requires start >= limit when delta < 0, got start ",
                                   start, " and limit ", limit);
  }
  if constexpr (std::is_integral_v<T>) {
    // In unsigned arithmetic: limit - start and |delta| may overflow T.
    using U = std::make_unsigned_t<T>;
    const U span = delta > 0 ? U(limit) - U(start) : U(start) - U(limit);
    const U step = delta > 0 ? U(delta) : U(0) - U(delta);
    const U n = span / step + (span % step != 0 ? 1 : 0);
    if (uint64_t{n} > uint64_t{kMaxRange}) {
      return errors::InvalidArgument("Range: ", n, " elements is more than the ", kMaxRange,
                                     " allowed");
    }
    return static_cast<int64_t>(n);
  } else {
    const double n = std::ceil(std::fabs((double(limit) - double(start)) / double(delta)));
    if (!(n <= double(kMaxRange))) {  // NaN and inf too
      return errors::InvalidArgument("Range: start ", start, ", limit ", limit, " and delta ",
                                     delta, " give ", n, " elements; at most ", kMaxRange,
                                     " are allowed");
    }
    return static_cast<int64_t>(n);
  }
}

template <typename T>
StatusOr<int64_t> RangeSizeOf(const Tensor& start, const Tensor& limit, const Tensor& delta) {
  const Tensor* in[] = {&start, &limit, &delta};
  const char* names[] = {"start", "limit", "delta"};
  for (int i = 0; i < 3; ++i) {
    if (in[i]->rank() != 0) {
      return errors::InvalidArgument("Range: ", names[i], " must be a scalar, got shape ",
                                     in[i]->shape().ToString());
    }
  }
  return RangeSize(start.data<T>()[0], limit.data<T>()[0], delta.data<T>()[0]);
}

StatusOr<int64_t> RangeSizeOfAny(const Tensor& start, const Tensor& limit, const Tensor& delta) {
  switch (start.dtype()) {
    case DType::kInt32: return RangeSizeOf<int32_t>(start, limit, delta);
    case DType::kInt64: return RangeSizeOf<int64_t>(start, limit, delta);
    case DType::kFloat32: return RangeSizeOf<float>(start, limit, delta);
    case DType::kFloat64: return RangeSizeOf<double>(start, limit, delta);
    default:
      return errors::InvalidArgument("Range does not support dtype ", DTypeName(start.dtype()));
  }
}

template <typename T>
void FillRange(T start, T delta, Tensor& out) {
  T* y = out.data<T>();
  for (int64_t i = 0; i < out.num_elements(); ++i) {
    if constexpr (std::is_integral_v<T>) {
      // Every element lies between start and limit, but i * delta alone
      // may overflow T: unsigned arithmetic wraps to the right value.
      using U = std::make_unsigned_t<T>;
      y[i] = static_cast<T>(U(start) + U(i) * U(delta));
    } else {
      y[i] = start + static_cast<T>(i) * delta;
    }
  }
}

class RangeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext& ctx) override {
    const Tensor &start = ctx.input(0), &delta = ctx.input(2);
    StatusOr<int64_t> n = RangeSizeOfAny(start, ctx.input(1), delta);
    TFD_OP_REQUIRES_OK(ctx, n.status());
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, TensorShape({*n}), &out));
    TFD_SWITCH_NUMERIC(start.dtype(), T, (FillRange(start.data<T>()[0], delta.data<T>()[0], *out)),
                       {});
  }
};

Status RangeShape(InferenceContext& c) {
  for (int i = 0; i < 3; ++i) TFD_RETURN_IF_ERROR(c.WithRank(i, 0));
  const Tensor *start = c.input_value(0), *limit = c.input_value(1), *delta = c.input_value(2);
  if (start == nullptr || limit == nullptr || delta == nullptr) {
    c.set_output(0, PartialShape({-1}));
    return OkStatus();
  }
  TFD_ASSIGN_OR_RETURN(int64_t n, RangeSizeOfAny(*start, *limit, *delta));
  c.set_output(0, PartialShape({n}));
  return OkStatus();
}

}  // namespace

Status RegisterRangeOp(OpRegistry& r) {
  return r.Add<RangeOp>(
      OpDefBuilder("Range")
          .Input("start: Tidx")
          .Input("limit: Tidx")
          .Input("delta: Tidx")
          .Output("output: Tidx")
          .Attr("Tidx: {int32, int64, float32, float64} = int32")
          .Doc("The numbers start + i * delta for i = 0, 1, ... while they are short of limit "
               "(numpy.arange); start, limit and delta are scalars. A delta of 0, or of the "
               "wrong sign for start and limit, is INVALID_ARGUMENT. Shape: [ceil((limit - "
               "start) / delta)], known when the three inputs are constants."),
      RangeShape);
}

}  // namespace tfd::kernels
