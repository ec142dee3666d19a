// Cast: element-wise conversion between the numeric dtypes and bool.
//
// C++ leaves float-to-integer conversion undefined when the value does not
// fit, so this kernel defines it: NaN becomes 0 and out-of-range values
// saturate at the integer type's limits. Integer narrowing wraps (two's
// complement), as in TensorFlow; anything to bool is "!= 0".
#include <cmath>
#include <limits>
#include <type_traits>

#include "common/op_kernel.h"
#include "kernels/array/array_ops_internal.h"

namespace tfd::kernels::array {
namespace {

template <typename To, typename From>
To CastValue(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    if (std::isnan(v)) return To(0);
    // Both limits are powers of two (or one less), exact in From.
    if (v <= static_cast<From>(std::numeric_limits<To>::lowest())) {
      return std::numeric_limits<To>::lowest();
    }
    if (v >= static_cast<From>(std::numeric_limits<To>::max())) {
      return std::numeric_limits<To>::max();
    }
    return static_cast<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

template <typename To, typename From>
void CastAll(const Tensor& in, const Tensor& out) {
  const From* src = in.data<From>();
  To* dst = out.data<To>();
  for (int64_t i = 0; i < in.num_elements(); ++i) dst[i] = CastValue<To, From>(src[i]);
}

class CastOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    const Tensor& in = ctx.input(0);
    const DType dst = ctx.output_type(0);
    if (in.dtype() == dst) {
      ctx.set_output(0, in);
      return;
    }
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, in.shape(), &out));
    const Status unsupported =
        errors::InvalidArgument("cannot cast ", in.Describe(), " to ", DTypeName(dst));
    // The parentheses keep the template's comma out of the macro arguments.
    TFD_SWITCH_POD(in.dtype(), From, {
      TFD_SWITCH_POD(dst, To, (CastAll<To, From>(in, *out)), ctx.SetStatus(unsupported));
    }, ctx.SetStatus(unsupported));
  }
};

}  // namespace

Status RegisterCastOps(OpRegistry& r) {
  return r.Add<CastOp>(
      OpDefBuilder("Cast")
          .Input("x: SrcT")
          .Output("y: DstT")
          .Attr("SrcT: {float32, float64, int32, int64, uint8, bool}")
          .Attr("DstT: {float32, float64, int32, int64, uint8, bool}")
          .Attr("Truncate: bool = false")
          .Doc("x converted element-wise to DstT: floats to integers truncate toward zero, "
               "saturating at the limits (NaN gives 0); integers wrap when narrowed; any "
               "value to bool is x != 0. Shape: x's shape."),
      shape_fns::UnchangedShape);
}

}  // namespace tfd::kernels::array
