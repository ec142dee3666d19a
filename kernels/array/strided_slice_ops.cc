// StridedSlice (Python's x[b:e:s, ..., tf.newaxis, i] on tensors) and its
// derivative op StridedSliceGrad, with TensorFlow's five masks and negative
// strides (strided_slice_spec.h resolves them), and the gradients of both.
// Elements of any dtype, strings included, are copied; a unit-stride last
// dimension moves as one run.
#include <cstring>
#include <string>
#include <vector>

#include "common/gradients.h"
#include "common/op_kernel.h"
#include "kernels/array/array_ops_internal.h"
#include "kernels/array/array_util.h"
#include "kernels/array/strided_slice_spec.h"
#include "kernels/math/grad_util.h"

namespace tfd::kernels::array {
namespace {

// Calls copy(input_pos, output_pos, n) for each run of the slice, in output
// order: input positions are flat indices of a tensor of `dims`.
template <typename Copy>
void WalkSlice(const StridedSliceSpec& s, const std::vector<int64_t>& dims, const Copy& copy) {
  const int rank = static_cast<int>(dims.size());
  if (rank == 0) {
    copy(0, 0, 1);
    return;
  }
  std::vector<int64_t> in_stride(rank, 1);
  for (int d = rank - 1; d > 0; --d) in_stride[d - 1] = in_stride[d] * dims[d];
  for (int d = 0; d < rank; ++d) {
    if (s.size[d] == 0) return;
  }
  const int last = rank - 1;
  const bool run = s.stride[last] == 1;
  std::vector<int64_t> idx(rank, 0);  // odometer over all but the last dimension
  int64_t out_pos = 0;
  while (true) {
    int64_t base = 0;
    for (int d = 0; d < last; ++d) base += (s.begin[d] + idx[d] * s.stride[d]) * in_stride[d];
    if (run) {
      copy(base + s.begin[last], out_pos, s.size[last]);
      out_pos += s.size[last];
    } else {
      for (int64_t i = 0; i < s.size[last]; ++i) {
        copy(base + s.begin[last] + i * s.stride[last], out_pos++, 1);
      }
    }
    int d = last - 1;
    for (; d >= 0 && ++idx[d] == s.size[d]; --d) idx[d] = 0;
    if (d < 0) return;
  }
}

// Reads begin, end, strides (inputs first..first+2) and resolves them
// against dims.
StatusOr<StridedSliceSpec> SpecFromInputs(OpKernelContext& ctx, int first,
                                          const std::vector<int64_t>& dims,
                                          const StridedSliceMasks& masks) {
  const char* names[] = {"begin", "end", "strides"};
  std::vector<int64_t> v[3];
  for (int i = 0; i < 3; ++i) {
    const Tensor& t = ctx.input(first + i);
    if (t.rank() != 1) {
      return errors::InvalidArgument("StridedSlice: ", names[i], " must be a vector, got ",
                                     t.Describe());
    }
    TFD_ASSIGN_OR_RETURN(v[i], IntsFromTensor(t, names[i]));
  }
  return ResolveStridedSlice(dims, v[0], v[1], v[2], masks);
}

class StridedSliceOp : public OpKernel {
 public:
  explicit StridedSliceOp(OpKernelConstruction& c) : OpKernel(c) {
    auto m = MasksFromAttrs(c.attrs());
    if (m.ok()) masks_ = *m;
    c.SetStatus(m.status());
  }

  void Compute(OpKernelContext& ctx) override {
    const Tensor& in = ctx.input(0);
    auto spec = SpecFromInputs(ctx, 1, in.shape().dims(), masks_);
    TFD_OP_REQUIRES_OK(ctx, spec.status().WithContext("node '" + name() + "': "));
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, TensorShape(spec->final_dims), &out));
    if (out->num_elements() == 0) return;
    WalkSlice(*spec, in.shape().dims(), [&](int64_t from, int64_t to, int64_t n) {
      CopyElements(in, from, *out, to, n);
    });
  }

 private:
  StridedSliceMasks masks_;
};

// dx: zeros of `shape` with dy scattered back where StridedSlice read it.
class StridedSliceGradOp : public OpKernel {
 public:
  explicit StridedSliceGradOp(OpKernelConstruction& c) : OpKernel(c) {
    auto m = MasksFromAttrs(c.attrs());
    if (m.ok()) masks_ = *m;
    c.SetStatus(m.status());
  }

  void Compute(OpKernelContext& ctx) override {
    auto dims = IntsFromTensor(ctx.input(0), "shape");
    TFD_OP_REQUIRES_OK(ctx, dims.status());
    auto shape = TensorShape::Make(*dims);
    TFD_OP_REQUIRES_OK(ctx, shape.status());
    auto spec = SpecFromInputs(ctx, 1, *dims, masks_);
    TFD_OP_REQUIRES_OK(ctx, spec.status().WithContext("node '" + name() + "': "));
    const Tensor& dy = ctx.input(4);
    TFD_OP_REQUIRES(ctx, dy.shape() == TensorShape(spec->final_dims),
                    errors::InvalidArgument(
                        "StridedSliceGrad '", name(), "': dy must have the slice's shape ",
                        TensorShape(spec->final_dims).ToString(), ", got ", dy.shape().ToString()));
    Tensor* dx = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, *shape, &dx));
    if (dx->dtype() != DType::kString) std::memset(dx->raw_data(), 0, dx->total_bytes());
    if (dy.num_elements() == 0) return;
    WalkSlice(*spec, *dims, [&](int64_t to, int64_t from, int64_t n) {
      CopyElements(dy, from, *dx, to, n);
    });
  }

 private:
  StridedSliceMasks masks_;
};

// The output shape when begin, end and strides are constants and the
// input's rank is known; unknown otherwise.
// With bounds known only at run time, what the masks and strides still
// tell: the rank, new axes, dimensions sliced whole (TF1's shape function
// keeps them too).
Status StridedSliceShapeFrom(InferenceContext& c, const PartialShape& input, int first) {
  std::optional<std::vector<int64_t>> v[3];
  for (int i = 0; i < 3; ++i) v[i] = c.InputAsInts(first + i);
  const PartialShape& begin = c.input(first);
  const int n =
      v[2] ? static_cast<int>(v[2]->size())
           : (begin.rank() == 1 && begin.dim(0) >= 0 ? static_cast<int>(begin.dim(0)) : -1);
  if (!input.rank_known() || n < 0) {
    c.set_output(0, PartialShape::Unknown());
    return OkStatus();
  }
  TFD_ASSIGN_OR_RETURN(StridedSliceMasks masks, MasksFromAttrs(c.attrs()));
  if (!v[0] || !v[1] || !v[2]) {
    TFD_ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                         StridedSliceDimsWithUnknownBounds(input.dims(), n, v[2], masks));
    c.set_output(0, PartialShape(std::move(dims)));
    return OkStatus();
  }
  TFD_ASSIGN_OR_RETURN(StridedSliceSpec s,
                       ResolveStridedSlice(input.dims(), *v[0], *v[1], *v[2], masks));
  c.set_output(0, PartialShape(s.final_dims));
  return OkStatus();
}

Status StridedSliceShape(InferenceContext& c) { return StridedSliceShapeFrom(c, c.input(0), 1); }

Status StridedSliceGradShape(InferenceContext& c) {
  c.set_output(0, ShapeFromShapeInput(c, 0));
  return OkStatus();
}

AttrMap SliceAttrs(const GradInputs& in) {
  AttrMap a;
  for (const char* k : {"begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask",
                        "shrink_axis_mask", "Index"}) {
    if (auto it = in.node.attrs.find(k); it != in.node.attrs.end()) a[k] = it->second;
  }
  return a;
}

Status StridedSliceGradient(Scope& s, const GradInputs& in, std::vector<Output>* dx) {
  const Output& begin = in.inputs[1];
  Output shape = grad::ShapeOf(s, in.inputs[0]);
  if (begin.dtype != DType::kInt32) shape = grad::Cast(s, shape, begin.dtype);
  (*dx)[0] = grad::Op(s, "StridedSliceGrad",
                      {shape, begin, in.inputs[2], in.inputs[3], in.dy[0]}, SliceAttrs(in));
  return OkStatus();
}

// StridedSliceGrad is linear in dy: its gradient slices the incoming one.
Status StridedSliceGradGradient(Scope& s, const GradInputs& in, std::vector<Output>* dx) {
  (*dx)[4] = grad::Op(s, "StridedSlice", {in.dy[0], in.inputs[1], in.inputs[2], in.inputs[3]},
                      SliceAttrs(in));
  return OkStatus();
}

OpDefBuilder WithMasks(OpDefBuilder def) {
  for (const char* m : {"begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask",
                        "shrink_axis_mask"}) {
    def.Attr(std::string(m) + ": int = 0");
  }
  return def.Attr("T: type").Attr("Index: {int32, int64}");
}

}  // namespace

Status RegisterStridedSliceOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<StridedSliceOp>(
      WithMasks(OpDefBuilder("StridedSlice")
                    .Input("input: T")
                    .Input("begin: Index")
                    .Input("end: Index")
                    .Input("strides: Index")
                    .Output("output: T"))
          .Doc("input[begin:end:strides] with Python's slicing rules, entry i of begin, end "
               "and strides slicing one dimension: negative indices count from the end, "
               "indices clamp to the dimension, a negative stride walks backwards. Bit i of "
               "begin_mask / end_mask ignores begin[i] / end[i] (the widest range); of "
               "ellipsis_mask makes entry i stand for as many full dimensions as needed (at "
               "most one bit); of new_axis_mask inserts a dimension of 1 (tf.newaxis); of "
               "shrink_axis_mask takes the single index begin[i] and drops the dimension. "
               "Entries past the last cover the remaining dimensions whole. Shape: the "
               "slice's, known when begin, end and strides are constants."),
      StridedSliceShape));
  TFD_RETURN_IF_ERROR(r.Add<StridedSliceGradOp>(
      WithMasks(OpDefBuilder("StridedSliceGrad")
                    .Input("shape: Index")
                    .Input("begin: Index")
                    .Input("end: Index")
                    .Input("strides: Index")
                    .Input("dy: T")
                    .Output("output: T"))
          .Doc("The gradient of StridedSlice: a tensor of the given shape (the sliced input's) "
               "holding zeros but where StridedSlice with the same begin, end, strides and "
               "masks read its elements, which hold dy. Shape: the value of shape."),
      StridedSliceGradShape));
  TFD_RETURN_IF_ERROR(grad::Register(r, "StridedSlice", StridedSliceGradient));
  return grad::Register(r, "StridedSliceGrad", StridedSliceGradGradient);
}

}  // namespace tfd::kernels::array
