// Slice: a box of the input given its corner (begin) and extent (size, -1
// meaning "to the end"). A box that is one contiguous run of the input's
// elements is returned as a view; others are copied run by run.
#include "common/op_kernel.h"
#include "kernels/array/array_ops_internal.h"
#include "kernels/array/array_util.h"

namespace tfd::kernels::array {
namespace {

// Checks begin/size against dims and resolves size -1. `dims` may hold -1
// (unknown, in shape functions): such dimensions are not checked and give
// -1 where the size depends on them.
StatusOr<std::vector<int64_t>> SliceSizes(const std::vector<int64_t>& dims,
                                          const std::vector<int64_t>& begin,
                                          const std::vector<int64_t>& size) {
  std::vector<int64_t> out(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    const int64_t b = begin[d];
    int64_t s = size[d];
    if (s == -1) s = dims[d] < 0 ? -1 : dims[d] - b;
    // s > dims - b rather than b + s > dims: no overflow for huge sizes.
    const bool bad = b < 0 || (size[d] != -1 && size[d] < 0) ||
                     (dims[d] >= 0 && (b > dims[d] || (s >= 0 && s > dims[d] - b)));
    if (bad) {
      return errors::InvalidArgument("slice out of range in dimension ", d, ": expected begin[",
                                     d, "] in [0, ", dims[d], "] and size[", d, "] in [0, ",
                                     dims[d], " - begin[", d, "]] or -1, got begin ", b,
                                     " and size ", size[d], " for input shape ",
                                     PartialShape(dims).ToString());
    }
    out[d] = s;
  }
  return out;
}

class SliceOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    const Tensor& in = ctx.input(0);
    const int rank = in.rank();
    for (int i : {1, 2}) {
      const Tensor& t = ctx.input(i);
      TFD_OP_REQUIRES(ctx, t.rank() == 1 && t.dim(0) == rank,
                      errors::InvalidArgument(i == 1 ? "begin" : "size",
                                              " must be a vector of length ", rank,
                                              " (the rank of input ", in.shape().ToString(),
                                              "), got ", t.Describe()));
    }
    auto begin = IntsFromTensor(ctx.input(1), "begin");
    TFD_OP_REQUIRES_OK(ctx, begin.status());
    auto size = IntsFromTensor(ctx.input(2), "size");
    TFD_OP_REQUIRES_OK(ctx, size.status());
    const std::vector<int64_t>& dims = in.shape().dims();
    auto sizes = SliceSizes(dims, *begin, *size);
    TFD_OP_REQUIRES_OK(ctx, sizes.status());
    const TensorShape out_shape(*sizes);

    // j: the last dimension cut short. Past it the box spans whole rows, so
    // for fixed indices before j, the box is one run of `run` elements.
    int j = rank - 1;
    while (j >= 0 && (*sizes)[j] == dims[j]) --j;
    if (j < 0) {  // the whole input
      ctx.set_output(0, in);
      return;
    }
    std::vector<int64_t> strides(rank, 1);
    for (int d = rank - 2; d >= 0; --d) strides[d] = strides[d + 1] * dims[d + 1];
    int64_t start = 0;
    for (int d = 0; d < rank; ++d) start += (*begin)[d] * strides[d];
    const int64_t run = (*sizes)[j] * strides[j];

    bool contiguous = true;  // a single run when every size before j is 1
    for (int d = 0; d < j; ++d) contiguous = contiguous && (*sizes)[d] == 1;
    if (contiguous || out_shape.num_elements() == 0) {
      auto view = FlatView(in, contiguous ? start : 0, out_shape);
      TFD_OP_REQUIRES_OK(ctx, view.status());
      ctx.set_output(0, std::move(*view));
      return;
    }
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, out_shape, &out));
    // Odometer over the output's indices in dimensions [0, j).
    std::vector<int64_t> index(j, 0);
    for (int64_t pos = 0; pos < out->num_elements(); pos += run) {
      int64_t from = start;
      for (int d = 0; d < j; ++d) from += index[d] * strides[d];
      CopyElements(in, from, *out, pos, run);
      for (int d = j - 1; d >= 0 && ++index[d] == (*sizes)[d]; --d) index[d] = 0;
    }
  }
};

Status SliceShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(c.WithRank(1, 1));
  TFD_RETURN_IF_ERROR(c.WithRank(2, 1));
  const PartialShape& in = c.input(0);
  int rank = in.rank();
  for (int i : {1, 2}) {
    const PartialShape& s = c.input(i);
    if (!s.rank_known() || s.dim(0) < 0) continue;
    if (rank >= 0 && s.dim(0) != rank) {
      return errors::InvalidArgument("input ", i, " (", i == 1 ? "begin" : "size",
                                     ") must have length ", rank, " (the rank of input 0) but "
                                     "has shape ", s.ToString());
    }
    rank = static_cast<int>(s.dim(0));
  }
  if (rank < 0) {
    c.set_output(0, PartialShape::Unknown());
    return OkStatus();
  }
  const std::vector<int64_t> dims = in.rank_known() ? in.dims() : std::vector<int64_t>(rank, -1);
  auto begin = c.InputAsInts(1);
  auto size = c.InputAsInts(2);
  if (size && static_cast<int>(size->size()) == rank) {
    if (!begin || static_cast<int>(begin->size()) != rank) {
      // Without begin, only the explicit sizes are certain.
      for (int64_t& s : *size) s = s < 0 ? -1 : s;
      c.set_output(0, PartialShape(std::move(*size)));
      return OkStatus();
    }
    TFD_ASSIGN_OR_RETURN(auto sizes, SliceSizes(dims, *begin, *size));
    c.set_output(0, PartialShape(std::move(sizes)));
    return OkStatus();
  }
  c.set_output(0, PartialShape::UnknownOfRank(rank));
  return OkStatus();
}

}  // namespace

Status RegisterSliceOps(OpRegistry& r) {
  return r.Add<SliceOp>(
      OpDefBuilder("Slice")
          .Input("input: T")
          .Input("begin: Index")
          .Input("size: Index")
          .Output("output: T")
          .Attr("T: type")
          .Attr("Index: {int32, int64}")
          .Doc("The part of input starting at index begin with extent size per dimension; "
               "a size of -1 takes everything to the end. Shape: size, with -1 resolved."),
      SliceShape);
}

}  // namespace tfd::kernels::array
