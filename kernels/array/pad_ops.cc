// Pad: input surrounded by zeros, paddings[d] = [before, after] elements in
// dimension d. Slice's gradient is built from it (the slice's gradient is
// dy padded back to the input's shape).
#include "common/op_kernel.h"
#include "kernels/array/array_ops_internal.h"
#include "kernels/array/array_util.h"

namespace tfd::kernels::array {
namespace {

// The paddings as {before, after} pairs, checked against the input's rank.
StatusOr<std::vector<std::pair<int64_t, int64_t>>> ReadPaddings(const Tensor& p, int rank) {
  if (p.rank() != 2 || p.dim(0) != rank || p.dim(1) != 2) {
    return errors::InvalidArgument("paddings must have shape [", rank,
                                   ", 2] (the rank of input, 2), got ", p.Describe());
  }
  std::vector<std::pair<int64_t, int64_t>> out(rank);
  for (int d = 0; d < rank; ++d) {
    for (int k = 0; k < 2; ++k) {
      const int64_t v = p.dtype() == DType::kInt32 ? p.data<int32_t>()[2 * d + k]
                                                   : p.data<int64_t>()[2 * d + k];
      if (v < 0) {
        return errors::InvalidArgument("paddings[", d, ", ", k, "] = ", v, " must be >= 0");
      }
      (k == 0 ? out[d].first : out[d].second) = v;
    }
  }
  return out;
}

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

Status PadShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(c.WithRank(1, 2));
  const PartialShape& in = c.input(0);
  const PartialShape& p = c.input(1);
  int rank = in.rank();
  if (p.rank_known() && p.dim(0) >= 0) {
    if ((rank >= 0 && p.dim(0) != rank) || (p.dim(1) >= 0 && p.dim(1) != 2)) {
      return errors::InvalidArgument("input 1 (paddings) must have shape [", rank,
                                     ", 2] but has shape ", p.ToString());
    }
    rank = static_cast<int>(p.dim(0));
  }
  if (rank < 0) {
    c.set_output(0, PartialShape::Unknown());
    return OkStatus();
  }
  const Tensor* value = c.input_value(1);
  if (!value) {
    c.set_output(0, PartialShape::UnknownOfRank(rank));
    return OkStatus();
  }
  TFD_ASSIGN_OR_RETURN(auto pads, ReadPaddings(*value, rank));
  std::vector<int64_t> dims(rank, -1);
  for (int d = 0; d < rank; ++d) {
    if (in.rank_known() && in.dim(d) >= 0) dims[d] = in.dim(d) + pads[d].first + pads[d].second;
  }
  c.set_output(0, PartialShape(std::move(dims)));
  return OkStatus();
}

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
      PadShape);
}

}  // namespace tfd::kernels::array
