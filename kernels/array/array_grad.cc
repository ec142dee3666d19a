// Gradient functions of the array ops: identities and reshapes, Cast,
// Transpose, Tile, Concat/Pack/Unpack/Split, Slice (through Pad) and Pad,
// Fill, Gather and UnsortedSegmentSum. Each follows TensorFlow's
// array_grad.py: the gradient of a gather along axis 0 is sparse (the rows
// of dy and the indices they came from, TF's IndexedSlices), and Identity
// passes a sparse gradient on as it is; other axes give a dense gradient
// (through UnsortedSegmentSum).
#include <algorithm>
#include <optional>

#include "kernels/array/array_ops_internal.h"
#include "kernels/math/grad_util.h"

namespace tfd::kernels::array {
namespace {

using namespace grad;  // NOLINT: the helpers are this file's vocabulary

using Dx = std::vector<Output>;

// The value of a constant integer scalar or vector, else nullopt.
std::optional<std::vector<int64_t>> ConstInts(const Scope& s, const Output& o) {
  const Tensor t = s.ConstantValue(o);
  if (!t.initialized() || t.rank() > 1) return std::nullopt;
  std::vector<int64_t> v(t.num_elements());
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    if (t.dtype() == DType::kInt32) {
      v[i] = t.data<int32_t>()[i];
    } else if (t.dtype() == DType::kInt64) {
      v[i] = t.data<int64_t>()[i];
    } else {
      return std::nullopt;
    }
  }
  return v;
}

Status PassThroughGrad(Scope&, const GradInputs& in, Dx* dx) {
  (*dx)[0] = in.dy[0];
  return OkStatus();
}

// Reshape, ExpandDims, Squeeze: dy back in the input's shape.
Status ReshapeGrad(Scope& s, const GradInputs& in, Dx* dx) {
  (*dx)[0] = ReshapeLike(s, in.dy[0], in.inputs[0]);
  return OkStatus();
}

Status NoGradient(Scope&, const GradInputs&, Dx*) { return OkStatus(); }

Status CastGrad(Scope& s, const GradInputs& in, Dx* dx) {
  if (IsFloating(in.inputs[0].dtype) && IsFloating(in.dy[0].dtype)) {
    (*dx)[0] = Cast(s, in.dy[0], in.inputs[0].dtype);
  }
  return OkStatus();
}

Status TransposeGrad(Scope& s, const GradInputs& in, Dx* dx) {
  const Output& perm = in.inputs[1];
  Output inverse;
  if (auto p = ConstInts(s, perm)) {
    std::vector<int64_t> inv(p->size());
    for (size_t i = 0; i < p->size(); ++i) {
      if ((*p)[i] < 0 || (*p)[i] >= static_cast<int64_t>(p->size())) {
        return errors::InvalidArgument("perm is not a permutation");
      }
      inv[(*p)[i]] = static_cast<int64_t>(i);
    }
    inverse = IntVector(s, inv);
  } else {
    inverse = Op(s, "InvertPermutation", {perm});
  }
  (*dx)[0] = Op(s, "Transpose", {in.dy[0], inverse});
  return OkStatus();
}

// Tile: view dy as [m0, d0, m1, d1, ...] and sum over the m axes.
Status TileGrad(Scope& s, const GradInputs& in, Dx* dx) {
  const Output &x = in.inputs[0], &multiples = in.inputs[1];
  const int rank = x.shape.rank();
  if (rank < 0) {
    return errors::InvalidArgument("the gradient of Tile needs the input's rank; got shape ",
                                   x.shape.ToString());
  }
  const auto m = ConstInts(s, multiples);
  Output split;
  if (m && x.shape.IsFullyDefined()) {
    std::vector<int64_t> dims;
    for (int d = 0; d < rank; ++d) dims.insert(dims.end(), {(*m)[d], x.shape.dim(d)});
    split = IntVector(s, dims);
  } else {
    const Output pairs = Op(s, "Pack", {Cast(s, multiples, DType::kInt32), ShapeOf(s, x)},
                            {{"axis", int64_t{1}}});
    split = Reshape(s, pairs, IntVector(s, {-1}));
  }
  std::vector<int64_t> axes(rank);
  for (int d = 0; d < rank; ++d) axes[d] = 2 * d;
  (*dx)[0] = ReshapeLike(s, Sum(s, Reshape(s, in.dy[0], split), IntVector(s, axes)), x);
  return OkStatus();
}

// ConcatV2 (values..., axis) and Concat (concat_dim, values...): each value
// gets its slice of dy.
Status ConcatGradImpl(Scope& s, const GradInputs& in, Dx* dx, int first, int count,
                      const Output& axis_input) {
  const auto axis_value = ConstInts(s, axis_input);
  int rank = -1;
  for (int i = 0; i < count; ++i) rank = std::max(rank, in.inputs[first + i].shape.rank());
  if (!axis_value || axis_value->size() != 1 || rank < 0) {
    return errors::InvalidArgument("the gradient of ", in.node.op,
                                   " needs a constant axis and values of known rank");
  }
  int64_t axis = (*axis_value)[0];
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return errors::InvalidArgument("axis out of range");
  std::vector<int64_t> at_axis(rank, 0);
  at_axis[axis] = 1;
  int64_t static_offset = 0;  // valid while every earlier size along axis is known
  Output offset;              // the offset in the graph once one is not
  for (int i = 0; i < count; ++i) {
    const Output& x = in.inputs[first + i];
    const Output size = ShapeOf(s, x);
    Output begin;
    if (!offset.valid()) {
      std::vector<int64_t> b(rank, 0);
      b[axis] = static_offset;
      begin = IntVector(s, b);
    } else {
      begin = Mul(s, IntVector(s, at_axis), offset);
    }
    (*dx)[first + i] = Op(s, "Slice", {in.dy[0], begin, size});
    const int64_t len = x.shape.rank_known() ? x.shape.dim(axis) : -1;
    if (!offset.valid() && len >= 0) {
      static_offset += len;
      continue;
    }
    if (!offset.valid()) offset = IntVector(s, {static_offset});
    const Output len_out = Op(s, "Slice", {size, IntVector(s, {axis}), IntVector(s, {1})});
    offset = Add(s, offset, len_out);
  }
  return OkStatus();
}

Status ConcatV2Grad(Scope& s, const GradInputs& in, Dx* dx) {
  const int n = static_cast<int>(in.inputs.size()) - 1;
  return ConcatGradImpl(s, in, dx, 0, n, in.inputs[n]);
}

Status ConcatGrad(Scope& s, const GradInputs& in, Dx* dx) {
  const int n = static_cast<int>(in.inputs.size()) - 1;
  return ConcatGradImpl(s, in, dx, 1, n, in.inputs[0]);
}

Status PackGrad(Scope& s, const GradInputs& in, Dx* dx) {
  TFD_ASSIGN_OR_RETURN(int64_t axis, in.GetAttr<int64_t>("axis"));
  const int64_t n = static_cast<int64_t>(in.inputs.size());
  const Operation parts = s.AddOperation("Unpack", {in.dy[0]}, {{"num", n}, {"axis", axis}});
  for (int i = 0; i < n; ++i) (*dx)[i] = parts.output(i);
  return OkStatus();
}

// The dys of a multi-output op, with zeros where no gradient arrived.
std::vector<Output> DyOrZeros(const Scope& s, const GradInputs& in) {
  std::vector<Output> dys;
  for (size_t i = 0; i < in.dy.size(); ++i) {
    dys.push_back(in.dy[i].valid() ? in.dy[i] : ZerosLike(s, in.outputs[i]));
  }
  return dys;
}

Status UnpackGrad(Scope& s, const GradInputs& in, Dx* dx) {
  TFD_ASSIGN_OR_RETURN(int64_t axis, in.GetAttr<int64_t>("axis"));
  (*dx)[0] = Op(s, "Pack", DyOrZeros(s, in), {{"axis", axis}});
  return OkStatus();
}

Status SplitGrad(Scope& s, const GradInputs& in, Dx* dx) {
  std::vector<Output> parts = DyOrZeros(s, in);
  if (parts.size() == 1) {  // ConcatV2 takes at least two values
    (*dx)[1] = parts[0];
    return OkStatus();
  }
  parts.push_back(in.inputs[0]);  // split_dim
  (*dx)[1] = Op(s, "ConcatV2", parts);
  return OkStatus();
}

// Slice: dy padded with zeros back to the input's shape.
Status SliceGrad(Scope& s, const GradInputs& in, Dx* dx) {
  const Output &x = in.inputs[0], &begin = in.inputs[1], &y = in.outputs[0];
  const auto b = ConstInts(s, begin);
  Output paddings;
  if (b && x.shape.IsFullyDefined() && y.shape.IsFullyDefined()) {
    std::vector<int32_t> p;
    for (int d = 0; d < x.shape.rank(); ++d) {
      p.push_back(static_cast<int32_t>((*b)[d]));
      p.push_back(static_cast<int32_t>(x.shape.dim(d) - (*b)[d] - y.shape.dim(d)));
    }
    paddings = Const(s, Tensor::FromVector<int32_t>(p, TensorShape({x.shape.rank(), 2})));
  } else {
    const Output b32 = Cast(s, begin, DType::kInt32);
    const Output after = Sub(s, Sub(s, ShapeOf(s, x), b32), ShapeOf(s, y));
    paddings = Op(s, "Pack", {b32, after}, {{"axis", int64_t{1}}});
  }
  (*dx)[0] = Op(s, "Pad", {in.dy[0], paddings});
  return OkStatus();
}

// Pad: the part of dy where the input was.
Status PadGrad(Scope& s, const GradInputs& in, Dx* dx) {
  const Output &x = in.inputs[0], &paddings = in.inputs[1];
  const Output before = Op(s, "Slice", {paddings, IntVector(s, {0, 0}), IntVector(s, {-1, 1})});
  const Output begin = Reshape(s, Cast(s, before, DType::kInt32), IntVector(s, {-1}));
  (*dx)[0] = Op(s, "Slice", {in.dy[0], begin, ShapeOf(s, x)});
  return OkStatus();
}

// Fill: every element came from the one value.
Status FillGrad(Scope& s, const GradInputs& in, Dx* dx) {
  (*dx)[1] = Sum(s, Reshape(s, in.dy[0], IntVector(s, {-1})), IntScalar(s, 0));
  return OkStatus();
}

// UnsortedSegmentSum: each data row gets the gradient of the row it was added to.
Status UnsortedSegmentSumGrad(Scope& s, const GradInputs& in, Dx* dx) {
  (*dx)[0] = Op(s, "Gather", {in.dy[0], in.inputs[1]});
  return OkStatus();
}

// Gather along `axis`: move the indexed dimension to the front (a no-op for
// axis 0), add each dy row into the params row it came from, move it back.
Status GatherAlongGrad(Scope& s, const GradInputs& in, Dx* dx, int64_t axis) {
  const Output &params = in.inputs[0], &indices = in.inputs[1], &dy = in.dy[0];
  const int r = params.shape.rank(), q = indices.shape.rank();
  if (r < 0 || q < 0) {
    return errors::InvalidArgument("the gradient of ", in.node.op,
                                   " needs params and indices of known rank");
  }
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) return errors::InvalidArgument("axis out of range");
  const int a = static_cast<int>(axis);
  // params_t = params with dimension a first; dy_t = dy with indices' dims first.
  std::vector<int64_t> to_front{a}, dy_perm, back(r);
  for (int d = 0; d < r; ++d) {
    if (d != a) to_front.push_back(d);
  }
  for (int d = 0; d < q; ++d) dy_perm.push_back(a + d);
  for (int d = 0; d < a; ++d) dy_perm.push_back(d);
  for (int d = a + q; d < r + q - 1; ++d) dy_perm.push_back(d);
  for (int d = 0; d < r; ++d) back[to_front[d]] = d;

  const Output dy_t = a == 0 ? dy : Op(s, "Transpose", {dy, IntVector(s, dy_perm)});
  Output shape_t;  // params_t's shape
  if (auto known = params.shape.AsTensorShape()) {
    std::vector<int64_t> dims;
    for (int64_t d : to_front) dims.push_back(known->dim(static_cast<int>(d)));
    shape_t = IntVector(s, dims);
  } else {
    shape_t = Op(s, "Gather", {ShapeOf(s, params), IntVector(s, to_front)});
  }
  const Output rows = Op(s, "Slice", {shape_t, IntVector(s, {0}), IntVector(s, {1})});
  const Output rest = Op(s, "Slice", {shape_t, IntVector(s, {1}), IntVector(s, {-1})});
  const Output flat_shape = Op(s, "ConcatV2", {IntVector(s, {-1}), rest, IntScalar(s, 0)});
  const Output flat_ids = Reshape(s, indices, IntVector(s, {-1}));
  const Output num = Reshape(s, rows, IntVector(s, {}));
  const Output grad_t =
      Op(s, "UnsortedSegmentSum", {Reshape(s, dy_t, flat_shape), flat_ids, num});
  (*dx)[0] = a == 0 ? grad_t : Op(s, "Transpose", {grad_t, IntVector(s, back)});
  return OkStatus();
}

Status GatherGrad(Scope& s, const GradInputs& in, Dx* dx) {
  return GatherAlongGrad(s, in, dx, 0);
}

Status GatherV2Grad(Scope& s, const GradInputs& in, Dx* dx) {
  const auto axis = ConstInts(s, in.inputs[2]);
  if (!axis || axis->size() != 1) {
    return errors::InvalidArgument("the gradient of GatherV2 needs a constant axis");
  }
  return GatherAlongGrad(s, in, dx, (*axis)[0]);
}

// Gather along axis 0, sparse: values are dy's rows, one per index, shaped
// [-1] + params.shape[1:]; indices flattened; dense_shape params' shape.
Status SparseGatherRows(Scope& s, const GradInputs& in, const std::vector<Gradient>& dy,
                        std::vector<Gradient>* dx) {
  const Output &params = in.inputs[0], &indices = in.inputs[1];
  const Output d = DenseOf(s, dy[0]);
  Output values_shape;
  if (auto known = params.shape.AsTensorShape(); known && known->rank() >= 1) {
    std::vector<int64_t> dims{-1};
    for (int i = 1; i < known->rank(); ++i) dims.push_back(known->dim(i));
    values_shape = IntVector(s, dims);
  } else {
    const Output rest = Op(s, "Slice", {ShapeOf(s, params), IntVector(s, {1}), IntVector(s, {-1})});
    values_shape = Op(s, "ConcatV2", {IntVector(s, {-1}), rest, IntScalar(s, 0)});
  }
  (*dx)[0].sparse = {Reshape(s, d, values_shape), Reshape(s, indices, IntVector(s, {-1})),
                     ShapeOf(s, params)};
  return OkStatus();
}

StatusOr<bool> GatherSparseGrad(Scope& s, const GradInputs& in, const std::vector<Gradient>& dy,
                                std::vector<Gradient>* dx) {
  TFD_RETURN_IF_ERROR(SparseGatherRows(s, in, dy, dx));
  return true;
}

// GatherV2 is sparse for a constant axis 0 without batch dims; otherwise it
// declines, and GatherV2Grad gives the dense gradient.
StatusOr<bool> GatherV2SparseGrad(Scope& s, const GradInputs& in,
                                  const std::vector<Gradient>& dy, std::vector<Gradient>* dx) {
  const auto axis = ConstInts(s, in.inputs[2]);
  auto batch_dims = in.GetAttr<int64_t>("batch_dims");
  if (!axis || axis->size() != 1 || (*axis)[0] != 0 || !batch_dims.ok() || *batch_dims != 0) {
    return false;
  }
  TFD_RETURN_IF_ERROR(SparseGatherRows(s, in, dy, dx));
  return true;
}

// Identity (a variable's read among others) keeps a sparse gradient sparse.
StatusOr<bool> IdentitySparseGrad(Scope&, const GradInputs&, const std::vector<Gradient>& dy,
                                  std::vector<Gradient>* dx) {
  if (!dy[0].is_sparse()) return false;
  (*dx)[0] = dy[0];
  return true;
}

}  // namespace

Status RegisterArrayGradients(OpRegistry& r) {
  const std::pair<const char*, GradFn> table[] = {
      {"Identity", SparseAwareGradFn{IdentitySparseGrad, PassThroughGrad}},
      {"PlaceholderWithDefault", PassThroughGrad},
      {"Reshape", ReshapeGrad},
      {"ExpandDims", ReshapeGrad},
      {"Squeeze", ReshapeGrad},
      {"ZerosLike", NoGradient},
      {"OnesLike", NoGradient},
      {"Cast", CastGrad},
      {"Transpose", TransposeGrad},
      {"Tile", TileGrad},
      {"ConcatV2", ConcatV2Grad},
      {"Concat", ConcatGrad},
      {"Pack", PackGrad},
      {"Unpack", UnpackGrad},
      {"Split", SplitGrad},
      {"Slice", SliceGrad},
      {"Pad", PadGrad},
      {"Fill", FillGrad},
      {"UnsortedSegmentSum", UnsortedSegmentSumGrad},
      {"Gather", SparseAwareGradFn{GatherSparseGrad, GatherGrad}},
      {"GatherV2", SparseAwareGradFn{GatherV2SparseGrad, GatherV2Grad}},
  };
  for (const auto& [op, fn] : table) TFD_RETURN_IF_ERROR(grad::Register(r, op, fn));
  return OkStatus();
}

}  // namespace tfd::kernels::array
