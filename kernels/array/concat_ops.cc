// Joining tensors: ConcatV2 (values, then axis), Concat (TensorFlow 1's old
// order: concat_dim first) and Pack (stack along a new axis).
#include "common/op_kernel.h"
#include "kernels/array/array_ops_internal.h"
#include "kernels/array/array_util.h"

namespace tfd::kernels::array {
namespace {

// Views every input as [outer, inner_i] and lays the rows side by side:
// out row o = in_0 row o, in_1 row o, ... Concat and Pack both reduce to it.
void Interleave(const std::vector<const Tensor*>& inputs, int64_t outer, const Tensor& out) {
  int64_t pos = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (const Tensor* in : inputs) {
      const int64_t inner = outer == 0 ? 0 : in->num_elements() / outer;
      CopyElements(*in, o * inner, out, pos, inner);
      pos += inner;
    }
  }
}

// The shape of the concatenation of `inputs` along the (signed) axis, or
// INVALID_ARGUMENT naming the first input that does not fit.
StatusOr<TensorShape> ConcatShape(const std::vector<const Tensor*>& inputs, int64_t axis_value,
                                  int* axis) {
  const TensorShape& first = inputs[0]->shape();
  if (first.rank() == 0) {
    return errors::InvalidArgument("cannot concatenate scalars (input 0 is ",
                                   inputs[0]->Describe(), "); use Pack to stack them");
  }
  TFD_ASSIGN_OR_RETURN(*axis, CanonicalAxis(axis_value, first.rank(), "axis"));
  std::vector<int64_t> dims = first.dims();
  for (size_t i = 1; i < inputs.size(); ++i) {
    const TensorShape& s = inputs[i]->shape();
    if (s.rank() != first.rank()) {
      return errors::InvalidArgument("input ", i, " has rank ", s.rank(), " (shape ",
                                     s.ToString(), ") but input 0 has rank ", first.rank(),
                                     " (shape ", first.ToString(), "); ranks must match");
    }
    for (int d = 0; d < s.rank(); ++d) {
      if (d != *axis && s.dim(d) != first.dim(d)) {
        return errors::InvalidArgument("input ", i, " has shape ", s.ToString(),
                                       " but input 0 has shape ", first.ToString(),
                                       ": dimension ", d, " must match outside axis ", *axis);
      }
    }
    dims[*axis] += s.dim(*axis);
  }
  return TensorShape::Make(std::move(dims));
}

class ConcatOp : public OpKernel {
 public:
  // `axis_first`: TensorFlow 1's Concat takes concat_dim before the values.
  ConcatOp(OpKernelConstruction& c, bool axis_first)
      : OpKernel(c), axis_input_(axis_first ? 0 : c.num_inputs() - 1) {}

  void Compute(OpKernelContext& ctx) override {
    const int first_value = axis_input_ == 0 ? 1 : 0;
    std::vector<const Tensor*> inputs;
    for (int i = 0; i < ctx.num_inputs() - 1; ++i) inputs.push_back(&ctx.input(first_value + i));
    auto axis_value = IntFromScalar(ctx.input(axis_input_), "axis");
    TFD_OP_REQUIRES_OK(ctx, axis_value.status());
    int axis = 0;
    auto shape = ConcatShape(inputs, *axis_value, &axis);
    TFD_OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, *shape, &out));
    Interleave(inputs, DimProduct(shape->dims(), 0, axis), *out);
  }

 private:
  int axis_input_;
};

class ConcatV2Op : public ConcatOp {
 public:
  explicit ConcatV2Op(OpKernelConstruction& c) : ConcatOp(c, false) {}
};
class ConcatV1Op : public ConcatOp {
 public:
  explicit ConcatV1Op(OpKernelConstruction& c) : ConcatOp(c, true) {}
};

// Shape function of both orders: exact when the axis is known, the rank
// alone otherwise.
Status ConcatShapeFn(InferenceContext& c, int axis_input, int first_value) {
  const int n = c.num_inputs() - 1;
  int rank = -1;
  int rank_source = -1;
  for (int i = 0; i < n; ++i) {
    const PartialShape& s = c.input(first_value + i);
    if (!s.rank_known()) continue;
    if (s.rank() == 0) {
      return errors::InvalidArgument("cannot concatenate scalars (value ", i,
                                     " has shape []); use Pack to stack them");
    }
    if (rank >= 0 && s.rank() != rank) {
      return errors::InvalidArgument("value ", i, " has rank ", s.rank(), " (shape ",
                                     s.ToString(), ") but value ", rank_source, " has rank ",
                                     rank, "; ranks must match");
    }
    rank = s.rank();
    rank_source = i;
  }
  auto axis_value = c.InputAsInts(axis_input);
  if (rank < 0 || !axis_value || axis_value->size() != 1) {
    c.set_output(0, rank < 0 ? PartialShape::Unknown() : PartialShape::UnknownOfRank(rank));
    return OkStatus();
  }
  TFD_ASSIGN_OR_RETURN(int axis, CanonicalAxis((*axis_value)[0], rank, "axis"));
  std::vector<int64_t> dims(rank, -1);
  int64_t axis_dim = 0;
  for (int i = 0; i < n; ++i) {
    const PartialShape& s = c.input(first_value + i);
    if (!s.rank_known()) {
      axis_dim = -1;
      continue;
    }
    for (int d = 0; d < rank; ++d) {
      if (d == axis) continue;
      if (dims[d] >= 0 && s.dim(d) >= 0 && dims[d] != s.dim(d)) {
        return errors::InvalidArgument("value ", i, " has shape ", s.ToString(),
                                       ", which differs in dimension ", d,
                                       " from the other values outside axis ", axis);
      }
      if (dims[d] < 0) dims[d] = s.dim(d);
    }
    if (axis_dim < 0 || s.dim(axis) < 0) {
      axis_dim = -1;
    } else if (__builtin_add_overflow(axis_dim, s.dim(axis), &axis_dim) ||
               axis_dim > kMaxTensorElements) {
      return errors::InvalidArgument("the values' sizes along axis ", axis, " add up to more than ",
                                     kMaxTensorElements);
    }
  }
  dims[axis] = axis_dim;
  c.set_output(0, PartialShape(std::move(dims)));
  return OkStatus();
}

Status ConcatV2Shape(InferenceContext& c) {
  return ConcatShapeFn(c, c.num_inputs() - 1, 0);
}
Status ConcatV1Shape(InferenceContext& c) { return ConcatShapeFn(c, 0, 1); }

// Pack accepts axis in [-(rank+1), rank]: the new axis may go after the last.
StatusOr<int> PackAxis(int64_t axis, int rank) {
  if (axis < -rank - 1 || axis > rank) {
    return errors::InvalidArgument("axis ", axis, " is out of range for packing tensors of rank ",
                                   rank, ": expected a value in [", -rank - 1, ", ", rank, "]");
  }
  return static_cast<int>(axis < 0 ? axis + rank + 1 : axis);
}

class PackOp : public OpKernel {
 public:
  explicit PackOp(OpKernelConstruction& c) : OpKernel(c) {
    c.SetStatus(c.GetAttr("axis", &axis_));
  }

  void Compute(OpKernelContext& ctx) override {
    std::vector<const Tensor*> inputs;
    const TensorShape& first = ctx.input(0).shape();
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor& in = ctx.input(i);
      TFD_OP_REQUIRES(ctx, in.shape() == first,
                      errors::InvalidArgument("all values must have the same shape, but value ",
                                              i, " has shape ", in.shape().ToString(),
                                              " and value 0 has ", first.ToString()));
      inputs.push_back(&in);
    }
    auto axis = PackAxis(axis_, first.rank());
    TFD_OP_REQUIRES_OK(ctx, axis.status());
    std::vector<int64_t> dims = first.dims();
    dims.insert(dims.begin() + *axis, ctx.num_inputs());
    auto shape = TensorShape::Make(std::move(dims));
    TFD_OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, *shape, &out));
    Interleave(inputs, DimProduct(first.dims(), 0, *axis), *out);
  }

 private:
  int64_t axis_ = 0;
};

Status PackShape(InferenceContext& c) {
  TFD_ASSIGN_OR_RETURN(int64_t axis, c.GetAttr<int64_t>("axis"));
  PartialShape merged = PartialShape::Unknown();
  for (int i = 0; i < c.num_inputs(); ++i) {
    auto m = merged.Merge(c.input(i));
    if (!m.ok()) {
      return errors::InvalidArgument("all values must have the same shape, but value ", i,
                                     " has shape ", c.input(i).ToString(),
                                     " and the others ", merged.ToString());
    }
    merged = std::move(*m);
  }
  if (!merged.rank_known()) {
    c.set_output(0, PartialShape::Unknown());
    return OkStatus();
  }
  TFD_ASSIGN_OR_RETURN(int pos, PackAxis(axis, merged.rank()));
  std::vector<int64_t> dims = merged.dims();
  dims.insert(dims.begin() + pos, c.num_inputs());
  c.set_output(0, PartialShape(std::move(dims)));
  return OkStatus();
}

}  // namespace

Status RegisterConcatOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<ConcatV2Op>(
      OpDefBuilder("ConcatV2")
          .Input("values: N * T")
          .Input("axis: Tidx")
          .Output("output: T")
          .Attr("N: int >= 2")
          .Attr("T: type")
          .Attr("Tidx: {int32, int64} = int32")
          .Doc("The values joined along axis (negative counts from the end); they must agree "
               "in rank and in every other dimension. Shape: the values' shape with the axis "
               "dimensions summed."),
      ConcatV2Shape));
  TFD_RETURN_IF_ERROR(r.Add<ConcatV1Op>(
      OpDefBuilder("Concat")
          .Input("concat_dim: int32")
          .Input("values: N * T")
          .Output("output: T")
          .Attr("N: int >= 2")
          .Attr("T: type")
          .Doc("ConcatV2 with TensorFlow 1's argument order: concat_dim first. Shape: the "
               "values' shape with the concat_dim dimensions summed."),
      ConcatV1Shape));
  TFD_RETURN_IF_ERROR(r.Add<PackOp>(
      OpDefBuilder("Pack")
          .Input("values: N * T")
          .Output("output: T")
          .Attr("N: int >= 1")
          .Attr("T: type")
          .Attr("axis: int = 0")
          .Doc("Stacks N tensors of one shape along a new dimension at axis (in "
               "[-(rank+1), rank]). Shape: the values' shape with N inserted at axis."),
      PackShape));
  return OkStatus();
}

}  // namespace tfd::kernels::array
