// Ops that describe a tensor rather than transform it: Shape, Size, Rank.
#include <limits>

#include "common/op_kernel.h"
#include "kernels/array/array_ops_internal.h"

namespace tfd::kernels::array {
namespace {

// Writes `values` into a fresh int32 or int64 output; int32 refuses values
// it cannot hold rather than wrapping them.
Status WriteInts(OpKernelContext& ctx, const std::vector<int64_t>& values,
                 const TensorShape& shape) {
  Tensor* out = nullptr;
  TFD_RETURN_IF_ERROR(ctx.allocate_output(0, shape, &out));
  for (size_t i = 0; i < values.size(); ++i) {
    if (out->dtype() == DType::kInt32) {
      if (values[i] > std::numeric_limits<int32_t>::max()) {
        return errors::InvalidArgument("value ", values[i], " of ", ctx.input(0).Describe(),
                                       " does not fit in int32; use out_type int64");
      }
      out->data<int32_t>()[i] = static_cast<int32_t>(values[i]);
    } else {
      out->data<int64_t>()[i] = values[i];
    }
  }
  return OkStatus();
}

class ShapeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    const TensorShape& s = ctx.input(0).shape();
    TFD_OP_REQUIRES_OK(ctx, WriteInts(ctx, s.dims(), TensorShape({s.rank()})));
  }
  bool is_cheap() const override { return true; }
};

Status ShapeShape(InferenceContext& c) {
  c.set_output(0, PartialShape({c.input(0).rank()}));  // rank() is -1 when unknown
  return OkStatus();
}

class SizeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    TFD_OP_REQUIRES_OK(ctx, WriteInts(ctx, {ctx.input(0).num_elements()}, TensorShape()));
  }
  bool is_cheap() const override { return true; }
};

class RankOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    TFD_OP_REQUIRES_OK(ctx, WriteInts(ctx, {ctx.input(0).rank()}, TensorShape()));
  }
  bool is_cheap() const override { return true; }
};

}  // namespace

Status RegisterShapeOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<ShapeOp>(
      OpDefBuilder("Shape")
          .Input("input: T")
          .Output("output: out_type")
          .Attr("T: type")
          .Attr("out_type: {int32, int64} = int32")
          .Doc("The dimensions of input as a vector. Shape: [rank of input]."),
      ShapeShape));
  TFD_RETURN_IF_ERROR(r.Add<SizeOp>(
      OpDefBuilder("Size")
          .Input("input: T")
          .Output("output: out_type")
          .Attr("T: type")
          .Attr("out_type: {int32, int64} = int32")
          .Doc("The number of elements of input. Shape: []."),
      shape_fns::Scalar));
  TFD_RETURN_IF_ERROR(r.Add<RankOp>(
      OpDefBuilder("Rank")
          .Input("input: T")
          .Output("output: int32")
          .Attr("T: type")
          .Doc("The number of dimensions of input. Shape: []."),
      shape_fns::Scalar));
  return OkStatus();
}

}  // namespace tfd::kernels::array
