// Ops that change only the shape, never the elements: Reshape, ExpandDims,
// Squeeze. Each output is a view sharing the input's buffer.
#include <algorithm>

#include "common/op_kernel.h"
#include "kernels/array/array_ops_internal.h"
#include "kernels/array/array_util.h"

namespace tfd::kernels::array {
namespace {

// Reshape's target for a tensor of `num_elements` elements (-1: unknown, as
// in a shape function): checks the sizes and fills in the one -1 when the
// element count allows.
StatusOr<PartialShape> ResolveReshape(std::vector<int64_t> dims, int64_t num_elements) {
  int unknown_index = -1;
  int64_t product = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == -1) {
      if (unknown_index != -1) {
        return errors::InvalidArgument("only one size of the new shape may be -1, not both ",
                                       unknown_index, " and ", i);
      }
      unknown_index = static_cast<int>(i);
    } else if (dims[i] < 0) {
      return errors::InvalidArgument("size ", i, " of the new shape must be non-negative or -1, "
                                     "got ", dims[i]);
    }
  }
  // A zero anywhere makes the product 0, however large the other sizes.
  if (std::find(dims.begin(), dims.end(), 0) != dims.end()) {
    product = 0;
  } else {
    for (int64_t d : dims) {
      if (d == -1) continue;
      if (__builtin_mul_overflow(product, d, &product) || product > kMaxTensorElements) {
        return errors::InvalidArgument("the new shape ", PartialShape(dims).ToString(),
                                       " has more than ", kMaxTensorElements, " elements");
      }
    }
  }
  if (num_elements < 0) return PartialShape(std::move(dims));
  if (unknown_index == -1) {
    if (product != num_elements) {
      return errors::InvalidArgument("cannot reshape a tensor with ", num_elements,
                                     " elements to shape ", PartialShape(dims).ToString(),
                                     " (", product, " elements)");
    }
    return PartialShape(std::move(dims));
  }
  if (product == 0) {
    return errors::InvalidArgument("cannot infer the -1 size of shape ",
                                   PartialShape(dims).ToString(),
                                   ": the other sizes multiply to 0");
  }
  if (num_elements % product != 0) {
    return errors::InvalidArgument("cannot reshape a tensor with ", num_elements,
                                   " elements to shape ", PartialShape(dims).ToString(),
                                   ": ", num_elements, " is not a multiple of ", product);
  }
  dims[unknown_index] = num_elements / product;
  return PartialShape(std::move(dims));
}

class ReshapeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    const Tensor& in = ctx.input(0);
    const Tensor& shape = ctx.input(1);
    TFD_OP_REQUIRES(ctx, shape.rank() == 1,
                    errors::InvalidArgument("shape must be a vector, got ", shape.Describe()));
    auto dims = IntsFromTensor(shape, "shape");
    TFD_OP_REQUIRES_OK(ctx, dims.status());
    auto target = ResolveReshape(std::move(*dims), in.num_elements());
    TFD_OP_REQUIRES_OK(ctx, target.status());
    auto out = in.Reshaped(TensorShape(target->dims()));
    TFD_OP_REQUIRES_OK(ctx, out.status());
    ctx.set_output(0, std::move(*out));
  }
  bool is_cheap() const override { return true; }
};

Status ReshapeShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(c.WithRank(1, 1));
  if (auto dims = c.InputAsInts(1); dims && c.input_value(1)->rank() == 1) {
    TFD_ASSIGN_OR_RETURN(PartialShape out,
                         ResolveReshape(std::move(*dims), c.input(0).num_elements()));
    c.set_output(0, std::move(out));
    return OkStatus();
  }
  c.set_output(0, ShapeFromShapeInput(c, 1));
  return OkStatus();
}

// ExpandDims accepts dim in [-rank-1, rank]: position rank appends.
StatusOr<int> ExpandAxis(int64_t dim, int rank) {
  if (dim < -rank - 1 || dim > rank) {
    return errors::InvalidArgument("dim ", dim, " is out of range for a tensor of rank ", rank,
                                   ": expected a value in [", -rank - 1, ", ", rank, "]");
  }
  return static_cast<int>(dim < 0 ? dim + rank + 1 : dim);
}

class ExpandDimsOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    const Tensor& in = ctx.input(0);
    auto dim = IntFromScalar(ctx.input(1), "dim");
    TFD_OP_REQUIRES_OK(ctx, dim.status());
    auto axis = ExpandAxis(*dim, in.rank());
    TFD_OP_REQUIRES_OK(ctx, axis.status());
    TensorShape shape = in.shape();
    shape.InsertDim(*axis, 1);
    auto out = in.Reshaped(shape);
    TFD_OP_REQUIRES_OK(ctx, out.status());
    ctx.set_output(0, std::move(*out));
  }
  bool is_cheap() const override { return true; }
};

Status ExpandDimsShape(InferenceContext& c) {
  const PartialShape& in = c.input(0);
  auto dim = c.InputAsInts(1);
  if (!in.rank_known()) {
    c.set_output(0, PartialShape::Unknown());
    return OkStatus();
  }
  if (!dim || dim->size() != 1) {
    c.set_output(0, PartialShape::UnknownOfRank(in.rank() + 1));
    return OkStatus();
  }
  TFD_ASSIGN_OR_RETURN(int axis, ExpandAxis((*dim)[0], in.rank()));
  std::vector<int64_t> dims = in.dims();
  dims.insert(dims.begin() + axis, 1);
  c.set_output(0, PartialShape(std::move(dims)));
  return OkStatus();
}

// Which dims Squeeze removes from `dims` (all the 1s when `requested` is
// empty). Dims of -1 are unknown: they are kept unless requested, and then
// assumed to be 1.
StatusOr<std::vector<int64_t>> SqueezedDims(const std::vector<int64_t>& dims,
                                            const std::vector<int64_t>& requested) {
  const int rank = static_cast<int>(dims.size());
  std::vector<bool> drop(rank, false);
  for (int64_t r : requested) {
    TFD_ASSIGN_OR_RETURN(int axis, CanonicalAxis(r, rank, "squeeze dim"));
    if (dims[axis] != 1 && dims[axis] != -1) {
      return errors::InvalidArgument("cannot squeeze dim ", r, ": expected size 1, got ",
                                     dims[axis], " in shape ", PartialShape(dims).ToString());
    }
    drop[axis] = true;
  }
  std::vector<int64_t> out;
  for (int i = 0; i < rank; ++i) {
    const bool squeeze = requested.empty() ? dims[i] == 1 : drop[i];
    if (!squeeze) out.push_back(dims[i]);
  }
  return out;
}

class SqueezeOp : public OpKernel {
 public:
  explicit SqueezeOp(OpKernelConstruction& c) : OpKernel(c) {
    c.SetStatus(c.GetAttr("squeeze_dims", &squeeze_dims_));
  }
  void Compute(OpKernelContext& ctx) override {
    const Tensor& in = ctx.input(0);
    auto dims = SqueezedDims(in.shape().dims(), squeeze_dims_);
    TFD_OP_REQUIRES_OK(ctx, dims.status());
    auto out = in.Reshaped(TensorShape(std::move(*dims)));
    TFD_OP_REQUIRES_OK(ctx, out.status());
    ctx.set_output(0, std::move(*out));
  }
  bool is_cheap() const override { return true; }

 private:
  std::vector<int64_t> squeeze_dims_;
};

Status SqueezeShape(InferenceContext& c) {
  TFD_ASSIGN_OR_RETURN(auto requested, c.GetAttr<std::vector<int64_t>>("squeeze_dims"));
  const PartialShape& in = c.input(0);
  // With no dims named, an unknown dim might be a 1 that goes: rank unknown.
  const bool ambiguous = requested.empty() && !in.IsFullyDefined();
  if (!in.rank_known() || ambiguous) {
    c.set_output(0, PartialShape::Unknown());
    return OkStatus();
  }
  TFD_ASSIGN_OR_RETURN(auto dims, SqueezedDims(in.dims(), requested));
  c.set_output(0, PartialShape(std::move(dims)));
  return OkStatus();
}

}  // namespace

Status RegisterReshapeOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<ReshapeOp>(
      OpDefBuilder("Reshape")
          .Input("tensor: T")
          .Input("shape: Tshape")
          .Output("output: T")
          .Attr("T: type")
          .Attr("Tshape: {int32, int64} = int32")
          .Doc("tensor's elements in row-major order under a new shape; one size may be -1 "
               "and is inferred. Shape: the value of shape, with the -1 resolved."),
      ReshapeShape));
  TFD_RETURN_IF_ERROR(r.Add<ExpandDimsOp>(
      OpDefBuilder("ExpandDims")
          .Input("input: T")
          .Input("dim: Tdim")
          .Output("output: T")
          .Attr("T: type")
          .Attr("Tdim: {int32, int64} = int32")
          .Doc("input with a dimension of size 1 inserted at index dim (negative counts "
               "from the end, -1 appends). Shape: input's shape with a 1 at dim."),
      ExpandDimsShape));
  TFD_RETURN_IF_ERROR(r.Add<SqueezeOp>(
      OpDefBuilder("Squeeze")
          .Input("input: T")
          .Output("output: T")
          .Attr("T: type")
          .Attr("squeeze_dims: list(int) = []")
          .Doc("input without the size-1 dimensions listed in squeeze_dims (all of them "
               "when empty). Shape: input's shape minus those dimensions."),
      SqueezeShape));
  return OkStatus();
}

}  // namespace tfd::kernels::array
