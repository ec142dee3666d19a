// GatherNd and ScatterNd: indexing by the last dimension of `indices`, each
// row of it an index into the leading K dimensions of params (or of the
// scattered shape), and their gradients (each is the other's). An index out
// of range is INVALID_ARGUMENT naming it, as TensorFlow's CPU kernels; in
// ScatterNd updates to one place are summed.
#include <cstring>
#include <vector>

#include "common/gradients.h"
#include "common/op_kernel.h"
#include "kernels/array/array_ops_internal.h"
#include "kernels/array/array_util.h"
#include "kernels/math/grad_util.h"

namespace tfd::kernels::array {
namespace {

// indices viewed as [n, k]; for each row, the flat offset (in slices of
// `slice` elements) into a tensor of `dims`, or an error naming the row.
StatusOr<std::vector<int64_t>> SliceOffsets(const Tensor& indices,
                                            const std::vector<int64_t>& dims, const char* op) {
  if (indices.rank() < 1) {
    return errors::InvalidArgument(op, ": indices must have rank >= 1, got a scalar");
  }
  const int64_t k = indices.dim(indices.rank() - 1);
  if (k > static_cast<int64_t>(dims.size())) {
    return errors::InvalidArgument(op, ": the last dimension of indices (", k,
                                   ") exceeds the rank ", dims.size(), " of ",
                                   PartialShape(dims).ToString());
  }
  if (indices.dtype() != DType::kInt32 && indices.dtype() != DType::kInt64) {
    return errors::InvalidArgument(op, ": indices must be int32 or int64, got ",
                                   indices.Describe());
  }
  auto at = [&](int64_t i) -> int64_t {
    return indices.dtype() == DType::kInt32 ? indices.data<int32_t>()[i]
                                            : indices.data<int64_t>()[i];
  };
  const int64_t n = DimProduct(indices.shape().dims(), 0, indices.rank() - 1);
  std::vector<int64_t> offsets(n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t v = at(i * k + j);
      if (v < 0 || v >= dims[j]) {
        return errors::InvalidArgument(op, ": index ", v, " at indices row ", i, ", position ",
                                       j, " is out of range for dimension ", j, " of size ",
                                       dims[j], " (shape ", PartialShape(dims).ToString(), ")");
      }
      off = off * dims[j] + v;
    }
    offsets[i] = off;
  }
  return offsets;
}

// The element count of one slice: the product of dims past the first k.
int64_t SliceSize(const std::vector<int64_t>& dims, int64_t k) {
  return DimProduct(dims, static_cast<int>(k), static_cast<int>(dims.size()));
}

class GatherNdOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    const Tensor& params = ctx.input(0);
    const Tensor& indices = ctx.input(1);
    const std::vector<int64_t>& dims = params.shape().dims();
    auto offsets = SliceOffsets(indices, dims, "GatherNd");
    TFD_OP_REQUIRES_OK(ctx, offsets.status());
    const int64_t k = indices.dim(indices.rank() - 1);
    const std::vector<int64_t>& idims = indices.shape().dims();
    std::vector<int64_t> out_dims(idims.begin(), idims.end() - 1);
    out_dims.insert(out_dims.end(), dims.begin() + k, dims.end());
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, TensorShape(out_dims), &out));
    const int64_t slice = SliceSize(dims, k);
    if (slice == 0) return;
    for (size_t i = 0; i < offsets->size(); ++i) {
      CopyElements(params, (*offsets)[i] * slice, *out, static_cast<int64_t>(i) * slice, slice);
    }
  }
};

template <typename T>
void AddSlices(const Tensor& updates, const std::vector<int64_t>& offsets, int64_t slice,
               Tensor& out) {
  const T* u = updates.data<T>();
  T* o = out.data<T>();
  for (size_t i = 0; i < offsets.size(); ++i) {
    for (int64_t j = 0; j < slice; ++j) o[offsets[i] * slice + j] += u[i * slice + j];
  }
}

class ScatterNdOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    const Tensor& indices = ctx.input(0);
    const Tensor& updates = ctx.input(1);
    auto dims = IntsFromTensor(ctx.input(2), "shape");
    TFD_OP_REQUIRES_OK(ctx, dims.status());
    auto shape = TensorShape::Make(*dims);
    TFD_OP_REQUIRES_OK(ctx, shape.status().WithContext("ScatterNd: shape: "));
    auto offsets = SliceOffsets(indices, *dims, "ScatterNd");
    TFD_OP_REQUIRES_OK(ctx, offsets.status());
    const int64_t k = indices.dim(indices.rank() - 1);
    std::vector<int64_t> want(indices.shape().dims().begin(), indices.shape().dims().end() - 1);
    want.insert(want.end(), dims->begin() + k, dims->end());
    TFD_OP_REQUIRES(ctx, updates.shape() == TensorShape(want),
                    errors::InvalidArgument("ScatterNd '", name(), "': updates must have shape ",
                                            TensorShape(want).ToString(), " (indices' rows, then "
                                            "shape past ", k, " dims), got ",
                                            updates.shape().ToString()));
    Tensor* out = nullptr;  // zeros
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, *shape, &out));
    const int64_t slice = SliceSize(*dims, k);
    if (slice == 0 || offsets->empty()) return;
    TFD_SWITCH_NUMERIC(updates.dtype(), T, (AddSlices<T>(updates, *offsets, slice, *out)), {});
  }
};

Status GatherNdShape(InferenceContext& c) {
  const PartialShape &params = c.input(0), &indices = c.input(1);
  if (!params.rank_known() || !indices.rank_known() || indices.rank() < 1 ||
      indices.dims().back() < 0) {
    c.set_output(0, PartialShape::Unknown());
    return OkStatus();
  }
  const int64_t k = indices.dims().back();
  if (k > params.rank()) {
    return errors::InvalidArgument("GatherNd: the last dimension of indices (", k,
                                   ") exceeds the rank of params ", params.ToString());
  }
  std::vector<int64_t> dims(indices.dims().begin(), indices.dims().end() - 1);
  dims.insert(dims.end(), params.dims().begin() + k, params.dims().end());
  c.set_output(0, PartialShape(dims));
  return OkStatus();
}

Status ScatterNdShape(InferenceContext& c) {
  c.set_output(0, ShapeFromShapeInput(c, 2));
  return OkStatus();
}

Status GatherNdGrad(Scope& s, const GradInputs& in, std::vector<Output>* dx) {
  const Output& indices = in.inputs[1];
  Output shape = grad::Op(s, "Shape", {in.inputs[0]});
  if (indices.dtype != DType::kInt32) shape = grad::Cast(s, shape, indices.dtype);
  (*dx)[0] = grad::Op(s, "ScatterNd", {indices, in.dy[0], shape});
  return OkStatus();
}

Status ScatterNdGrad(Scope& s, const GradInputs& in, std::vector<Output>* dx) {
  (*dx)[1] = grad::Op(s, "GatherNd", {in.dy[0], in.inputs[0]});
  return OkStatus();
}

}  // namespace

Status RegisterGatherScatterNdOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<GatherNdOp>(
      OpDefBuilder("GatherNd")
          .Input("params: Tparams")
          .Input("indices: Tindices")
          .Output("output: Tparams")
          .Attr("Tparams: type")
          .Attr("Tindices: {int32, int64}")
          .Doc("Slices of params picked by the rows of indices: with K the last dimension of "
               "indices, each row indexes params' first K dimensions and yields the slice "
               "below them. An index out of range is INVALID_ARGUMENT. Shape: indices' shape "
               "without its last dimension, then params' dimensions past K."),
      GatherNdShape));
  TFD_RETURN_IF_ERROR(r.Add<ScatterNdOp>(
      OpDefBuilder("ScatterNd")
          .Input("indices: Tindices")
          .Input("updates: T")
          .Input("shape: Tindices")
          .Output("output: T")
          .Attr("T: {float32, float64, int32, int64}")
          .Attr("Tindices: {int32, int64}")
          .Doc("Zeros of the given shape with the slices of updates added where the rows of "
               "indices point (GatherNd's inverse; repeated indices sum). updates has shape "
               "indices' shape without its last dimension K, then shape past K. An index out "
               "of range is INVALID_ARGUMENT. Shape: the value of shape."),
      ScatterNdShape));
  TFD_RETURN_IF_ERROR(grad::Register(r, "GatherNd", GatherNdGrad));
  return grad::Register(r, "ScatterNd", ScatterNdGrad);
}

}  // namespace tfd::kernels::array
