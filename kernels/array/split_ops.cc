// Cutting a tensor into pieces: Split (equal parts along a dimension) and
// Unpack (one piece per index of a dimension, which disappears). When every
// dimension before the cut has size 1 the pieces are contiguous, and the
// outputs are views of the input's buffer instead of copies.
#include "common/op_kernel.h"
#include "kernels/array/array_ops_internal.h"
#include "kernels/array/array_util.h"

namespace tfd::kernels::array {
namespace {

// Emits `num` pieces of `in` along `axis`, each `piece` indices wide, shaped
// `out_shape` (which may drop the axis, for Unpack).
void EmitPieces(OpKernelContext& ctx, const Tensor& in, int axis, int64_t num, int64_t piece,
                const TensorShape& out_shape) {
  const auto& dims = in.shape().dims();
  const int64_t outer = DimProduct(dims, 0, axis);
  const int64_t inner = DimProduct(dims, axis + 1, in.rank());
  const int64_t block = piece * inner;  // elements of one piece per outer row
  for (int64_t i = 0; i < num; ++i) {
    if (outer == 1) {
      auto view = FlatView(in, i * block, out_shape);
      TFD_OP_REQUIRES_OK(ctx, view.status());
      ctx.set_output(static_cast<int>(i), std::move(*view));
      continue;
    }
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(static_cast<int>(i), out_shape, &out));
    for (int64_t o = 0; o < outer; ++o) {
      CopyElements(in, (o * dims[axis] + i * piece) * inner, *out, o * block, block);
    }
  }
}

class SplitOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    const Tensor& in = ctx.input(1);
    const int64_t num = ctx.num_outputs();
    auto split_dim = IntFromScalar(ctx.input(0), "split_dim");
    TFD_OP_REQUIRES_OK(ctx, split_dim.status());
    auto axis = CanonicalAxis(*split_dim, in.rank(), "split_dim");
    TFD_OP_REQUIRES_OK(ctx, axis.status());
    const int64_t size = in.dim(*axis);
    TFD_OP_REQUIRES(ctx, size % num == 0,
                    errors::InvalidArgument("num_split ", num, " must evenly divide dimension ",
                                            *axis, " of value, but it has size ", size,
                                            " (shape ", in.shape().ToString(), ")"));
    TensorShape piece_shape = in.shape();
    piece_shape.set_dim(*axis, size / num);
    EmitPieces(ctx, in, *axis, num, size / num, piece_shape);
  }
};

Status SplitShape(InferenceContext& c) {
  const PartialShape& in = c.input(1);
  TFD_RETURN_IF_ERROR(c.WithRank(0, 0));
  const int64_t num = c.num_outputs();
  auto split_dim = c.InputAsInts(0);
  PartialShape piece = PartialShape::Unknown();
  if (in.rank_known() && (!split_dim || split_dim->size() != 1)) {
    piece = PartialShape::UnknownOfRank(in.rank());
  } else if (in.rank_known()) {
    TFD_ASSIGN_OR_RETURN(int axis, CanonicalAxis((*split_dim)[0], in.rank(), "split_dim"));
    std::vector<int64_t> dims = in.dims();
    if (dims[axis] >= 0 && dims[axis] % num != 0) {
      return errors::InvalidArgument("num_split ", num, " must evenly divide dimension ", axis,
                                     " of value, but it has size ", dims[axis], " (shape ",
                                     in.ToString(), ")");
    }
    if (dims[axis] >= 0) dims[axis] /= num;
    piece = PartialShape(std::move(dims));
  }
  for (int i = 0; i < num; ++i) c.set_output(i, piece);
  return OkStatus();
}

class UnpackOp : public OpKernel {
 public:
  explicit UnpackOp(OpKernelConstruction& c) : OpKernel(c) {
    c.SetStatus(c.GetAttr("axis", &axis_));
  }

  void Compute(OpKernelContext& ctx) override {
    const Tensor& in = ctx.input(0);
    const int64_t num = ctx.num_outputs();
    auto axis = CanonicalAxis(axis_, in.rank(), "axis");
    TFD_OP_REQUIRES_OK(ctx, axis.status());
    TFD_OP_REQUIRES(ctx, in.dim(*axis) == num,
                    errors::InvalidArgument("num is ", num, " but dimension ", *axis,
                                            " of value has size ", in.dim(*axis), " (shape ",
                                            in.shape().ToString(), ")"));
    TensorShape piece_shape = in.shape();
    piece_shape.RemoveDim(*axis);
    EmitPieces(ctx, in, *axis, num, 1, piece_shape);
  }

 private:
  int64_t axis_ = 0;
};

Status UnpackShape(InferenceContext& c) {
  TFD_ASSIGN_OR_RETURN(int64_t axis_attr, c.GetAttr<int64_t>("axis"));
  const PartialShape& in = c.input(0);
  PartialShape piece = PartialShape::Unknown();
  if (in.rank_known()) {
    TFD_ASSIGN_OR_RETURN(int axis, CanonicalAxis(axis_attr, in.rank(), "axis"));
    if (in.dim(axis) >= 0 && in.dim(axis) != c.num_outputs()) {
      return errors::InvalidArgument("num is ", c.num_outputs(), " but dimension ", axis,
                                     " of value has size ", in.dim(axis), " (shape ",
                                     in.ToString(), ")");
    }
    std::vector<int64_t> dims = in.dims();
    dims.erase(dims.begin() + axis);
    piece = PartialShape(std::move(dims));
  }
  for (int i = 0; i < c.num_outputs(); ++i) c.set_output(i, piece);
  return OkStatus();
}

}  // namespace

Status RegisterSplitOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<SplitOp>(
      OpDefBuilder("Split")
          .Input("split_dim: int32")
          .Input("value: T")
          .Output("output: num_split * T")
          .Attr("num_split: int >= 1")
          .Attr("T: type")
          .Doc("value cut into num_split equal pieces along split_dim (negative counts from "
               "the end), whose size num_split must divide. Shape: value's shape with that "
               "dimension divided by num_split."),
      SplitShape));
  TFD_RETURN_IF_ERROR(r.Add<UnpackOp>(
      OpDefBuilder("Unpack")
          .Input("value: T")
          .Output("output: num * T")
          .Attr("num: int >= 0")
          .Attr("T: type")
          .Attr("axis: int = 0")
          .Doc("value unstacked along axis into its num slices; dimension axis must have "
               "size num. Shape: value's shape without axis."),
      UnpackShape));
  return OkStatus();
}

}  // namespace tfd::kernels::array
