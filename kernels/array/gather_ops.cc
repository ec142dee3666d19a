// Gather (rows of params along axis 0, TensorFlow 1's original op) and
// GatherV2 (along any axis). Every index is checked before anything is
// read: an index out of range is INVALID_ARGUMENT naming it.
#include <optional>
#include <string>

#include "common/op_kernel.h"
#include "kernels/array/array_ops_internal.h"
#include "kernels/array/array_util.h"

namespace tfd::kernels::array {
namespace {

// "indices[1, 2]" for flat position `pos` of a tensor shaped `shape`.
std::string IndexName(const TensorShape& shape, int64_t pos) {
  std::vector<int64_t> index(shape.rank());
  for (int d = shape.rank() - 1; d >= 0; --d) {
    index[d] = pos % shape.dim(d);
    pos /= shape.dim(d);
  }
  std::string s = "indices[";
  for (size_t d = 0; d < index.size(); ++d) s += (d ? ", " : "") + std::to_string(index[d]);
  return s + "]";
}

void GatherAlong(OpKernelContext& ctx, int64_t axis_value) {
  const Tensor& params = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  TFD_OP_REQUIRES(ctx, params.rank() >= 1,
                  errors::InvalidArgument("params must have rank >= 1, got ", params.Describe()));
  auto axis = CanonicalAxis(axis_value, params.rank(), "axis");
  TFD_OP_REQUIRES_OK(ctx, axis.status());
  const std::vector<int64_t>& pdims = params.shape().dims();
  const int64_t outer = DimProduct(pdims, 0, *axis);
  const int64_t limit = pdims[*axis];
  const int64_t inner = DimProduct(pdims, *axis + 1, params.rank());

  std::vector<int64_t> index(indices.num_elements());
  for (int64_t i = 0; i < indices.num_elements(); ++i) {
    index[i] = indices.dtype() == DType::kInt32 ? indices.data<int32_t>()[i]
                                                : indices.data<int64_t>()[i];
    TFD_OP_REQUIRES(ctx, index[i] >= 0 && index[i] < limit,
                    errors::InvalidArgument(IndexName(indices.shape(), i), " = ", index[i],
                                            " is not in [0, ", limit, ") (dimension ", *axis,
                                            " of params ", params.shape().ToString(), ")"));
  }

  std::vector<int64_t> dims(pdims.begin(), pdims.begin() + *axis);
  dims.insert(dims.end(), indices.shape().dims().begin(), indices.shape().dims().end());
  dims.insert(dims.end(), pdims.begin() + *axis + 1, pdims.end());
  auto shape = TensorShape::Make(std::move(dims));
  TFD_OP_REQUIRES_OK(ctx, shape.status());
  Tensor* out = nullptr;
  TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, *shape, &out));
  const int64_t n = static_cast<int64_t>(index.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < n; ++i) {
      CopyElements(params, (o * limit + index[i]) * inner, *out, (o * n + i) * inner, inner);
    }
  }
}

class GatherOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override { GatherAlong(ctx, 0); }
};

class GatherV2Op : public OpKernel {
 public:
  explicit GatherV2Op(OpKernelConstruction& c) : OpKernel(c) {
    int64_t batch_dims = 0;
    c.SetStatus(c.GetAttr("batch_dims", &batch_dims));
    if (c.status().ok() && batch_dims != 0) {
      c.SetStatus(errors::InvalidArgument("batch_dims must be 0, got ", batch_dims,
                                          " (batched gather is not supported)"));
    }
  }
  void Compute(OpKernelContext& ctx) override {
    auto axis = IntFromScalar(ctx.input(2), "axis");
    TFD_OP_REQUIRES_OK(ctx, axis.status());
    GatherAlong(ctx, *axis);
  }
};

// params[:axis] + indices + params[axis+1:], as far as it is known.
Status GatherShapeAlong(InferenceContext& c, std::optional<int64_t> axis_value) {
  const PartialShape& params = c.input(0);
  const PartialShape& indices = c.input(1);
  if (params.rank_known() && params.rank() == 0) {
    return errors::InvalidArgument("input 0 (params) must have rank >= 1 but has shape []");
  }
  if (!params.rank_known() || !indices.rank_known()) {
    c.set_output(0, PartialShape::Unknown());
    return OkStatus();
  }
  if (!axis_value) {
    c.set_output(0, PartialShape::UnknownOfRank(params.rank() + indices.rank() - 1));
    return OkStatus();
  }
  TFD_ASSIGN_OR_RETURN(int axis, CanonicalAxis(*axis_value, params.rank(), "axis"));
  std::vector<int64_t> dims(params.dims().begin(), params.dims().begin() + axis);
  dims.insert(dims.end(), indices.dims().begin(), indices.dims().end());
  dims.insert(dims.end(), params.dims().begin() + axis + 1, params.dims().end());
  c.set_output(0, PartialShape(std::move(dims)));
  return OkStatus();
}

Status GatherShape(InferenceContext& c) { return GatherShapeAlong(c, 0); }

Status GatherV2Shape(InferenceContext& c) {
  TFD_ASSIGN_OR_RETURN(int64_t batch_dims, c.GetAttr<int64_t>("batch_dims"));
  if (batch_dims != 0) return errors::InvalidArgument("batch_dims must be 0, got ", batch_dims);
  std::optional<int64_t> axis;
  if (auto a = c.InputAsInts(2); a && a->size() == 1) axis = (*a)[0];
  return GatherShapeAlong(c, axis);
}

}  // namespace

Status RegisterGatherOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<GatherOp>(
      OpDefBuilder("Gather")
          .Input("params: Tparams")
          .Input("indices: Tindices")
          .Output("output: Tparams")
          .Attr("validate_indices: bool = true")
          .Attr("Tparams: type")
          .Attr("Tindices: {int32, int64}")
          .Doc("The rows params[indices] along dimension 0; every index must be in "
               "[0, rows). Shape: indices' shape + params' shape[1:]."),
      GatherShape));
  TFD_RETURN_IF_ERROR(r.Add<GatherV2Op>(
      OpDefBuilder("GatherV2")
          .Input("params: Tparams")
          .Input("indices: Tindices")
          .Input("axis: Taxis")
          .Output("output: Tparams")
          .Attr("batch_dims: int = 0")
          .Attr("Tparams: type")
          .Attr("Tindices: {int32, int64}")
          .Attr("Taxis: {int32, int64}")
          .Doc("Slices of params selected by indices along axis (negative counts from the "
               "end); every index must be in range. Shape: params' shape[:axis] + indices' "
               "shape + params' shape[axis+1:]."),
      GatherV2Shape));
  return OkStatus();
}

}  // namespace tfd::kernels::array
