// Pad: input surrounded by zeros, paddings[d] = [before, after] elements in
// dimension d. Slice's gradient is built from it (the slice's gradient is
// dy padded back to the input's shape).
#include "common/op_kernel.h"
#include "kernels/array/array_ops_internal.h"
#include "kernels/array/array_util.h"

namespace tfd::kernels::array {
namespace {

class PadOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    const Tensor& in = ctx.input(0);
    const int rank = in.rank();
    auto pads = ReadPaddings(ctx.input(1), rank);
    TFD_OP_REQUIRES_OK(ctx, pads.status());
    std::vector<int64_t> dims(rank);
    for (int d = 0; d < rank; ++d) {
      const auto [before, after] = (*pads)[d];
      if (__builtin_add_overflow(in.dim(d), before, &dims[d]) ||
          __builtin_add_overflow(dims[d], after, &dims[d])) {
        dims[d] = kMaxTensorElements + 1;  // refused by Make below
      }
    }
    auto shape = TensorShape::Make(std::move(dims));
    TFD_OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, *shape, &out));  // zero-filled
    if (in.num_elements() == 0) return;
    if (rank == 0) {
      CopyElements(in, 0, *out, 0, 1);
      return;
    }
    std::vector<int64_t> out_strides(rank, 1);
    for (int d = rank - 2; d >= 0; --d) out_strides[d] = out_strides[d + 1] * out->dim(d + 1);
    // Each run of the input's last dimension lands at its padded position;
    // an odometer walks the input's leading indices.
    const int64_t run = in.dim(rank - 1);
    std::vector<int64_t> index(rank - 1, 0);
    for (int64_t from = 0; from < in.num_elements(); from += run) {
      int64_t to = (*pads)[rank - 1].first;
      for (int d = 0; d < rank - 1; ++d) to += (index[d] + (*pads)[d].first) * out_strides[d];
      CopyElements(in, from, *out, to, run);
      for (int d = rank - 2; d >= 0 && ++index[d] == in.dim(d); --d) index[d] = 0;
    }
  }
};

}  // namespace

Status RegisterPadOps(OpRegistry& r) {
  return r.Add<PadOp>(
      OpDefBuilder("Pad")
          .Input("input: T")
          .Input("paddings: Tpaddings")
          .Output("output: T")
          .Attr("T: type")
          .Attr("Tpaddings: {int32, int64} = int32")
          .Doc("input with paddings[d][0] zeros before and paddings[d][1] zeros after it in "
               "each dimension d (empty strings for strings). Shape: input's, each dimension "
               "grown by its two paddings; paddings must be [rank, 2] and non-negative."),
      PaddedShape);
}

}  // namespace tfd::kernels::array
