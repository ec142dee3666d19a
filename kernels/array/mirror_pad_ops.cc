// MirrorPad: input padded with its own reflection in each dimension
// (tf.pad's REFLECT and SYMMETRIC modes). REFLECT leaves the edge element
// out of the mirror ([1 2 3] padded by 2 before: [3 2 1 2 3]) and takes at
// most dim - 1 on a side; SYMMETRIC repeats it ([2 1 1 2 3]) and takes at
// most dim. MirrorPadGrad adds each padded element's gradient back onto the
// element it copied; each op's gradient is the other (TF's pair).
#include <string>
#include <vector>

#include "common/gradients.h"
#include "common/op_kernel.h"
#include "kernels/array/array_ops_internal.h"
#include "kernels/array/array_util.h"
#include "kernels/math/grad_util.h"

namespace tfd::kernels::array {
namespace {

using Paddings = std::vector<std::pair<int64_t, int64_t>>;

// The attr mode as SYMMETRIC (true) or REFLECT (false).
StatusOr<bool> SymmetricFrom(const AttrMap& attrs) {
  auto it = attrs.find("mode");
  const std::string* mode = it == attrs.end() ? nullptr : std::get_if<std::string>(&it->second);
  if (mode != nullptr && (*mode == "REFLECT" || *mode == "SYMMETRIC")) return *mode == "SYMMETRIC";
  return errors::InvalidArgument("attr 'mode' must be REFLECT or SYMMETRIC, got ",
                                 mode != nullptr ? "'" + *mode + "'" : "none");
}

// INVALID_ARGUMENT unless every padding fits the mode: at most dim - 1
// (REFLECT) or dim (SYMMETRIC) elements on a side.
Status CheckFits(const Paddings& pads, const std::vector<int64_t>& dims, bool symmetric) {
  for (size_t d = 0; d < dims.size(); ++d) {
    const int64_t most = symmetric ? dims[d] : dims[d] - 1;
    if (pads[d].first > most || pads[d].second > most) {
      return errors::InvalidArgument("paddings [", pads[d].first, ", ", pads[d].second,
                                     "] of dimension ", d, " (size ", dims[d], ") must be at most ",
                                     most, " each in ", symmetric ? "SYMMETRIC" : "REFLECT",
                                     " mode");
    }
  }
  return OkStatus();
}

// The input index that padded index `o` of a dimension of size n copies.
int64_t MirrorIndex(int64_t o, int64_t before, int64_t n, bool symmetric) {
  const int64_t i = o - before;
  if (i < 0) return symmetric ? -i - 1 : -i;
  if (i >= n) return symmetric ? 2 * n - 1 - i : 2 * (n - 1) - i;
  return i;
}

// Calls visit(padded flat index, input flat index) for every element of
// the padded shape, in order.
template <typename Visit>
void ForEachMirrored(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& out_dims,
                     const Paddings& pads, bool symmetric, Visit visit) {
  const int rank = static_cast<int>(in_dims.size());
  std::vector<int64_t> in_strides(rank, 1);
  for (int d = rank - 2; d >= 0; --d) in_strides[d] = in_strides[d + 1] * in_dims[d + 1];
  const int64_t total = DimProduct(out_dims, 0, rank);
  std::vector<int64_t> index(rank, 0);
  for (int64_t o = 0; o < total; ++o) {
    int64_t from = 0;
    for (int d = 0; d < rank; ++d) {
      from += MirrorIndex(index[d], pads[d].first, in_dims[d], symmetric) * in_strides[d];
    }
    visit(o, from);
    for (int d = rank - 1; d >= 0 && ++index[d] == out_dims[d]; --d) index[d] = 0;
  }
}

// Both kernels' mode, read from the attr once.
class MirrorKernel : public OpKernel {
 public:
  explicit MirrorKernel(OpKernelConstruction& c) : OpKernel(c) {
    auto symmetric = SymmetricFrom(c.attrs());
    if (symmetric.ok()) symmetric_ = *symmetric;
    c.SetStatus(symmetric.status());
  }

 protected:
  bool symmetric_ = false;
};

class MirrorPadOp : public MirrorKernel {
 public:
  using MirrorKernel::MirrorKernel;

  void Compute(OpKernelContext& ctx) override {
    const Tensor& in = ctx.input(0);
    const std::vector<int64_t>& dims = in.shape().dims();
    auto pads = ReadPaddings(ctx.input(1), in.rank());
    TFD_OP_REQUIRES_OK(ctx, pads.status());
    TFD_OP_REQUIRES_OK(ctx, CheckFits(*pads, dims, symmetric_));
    std::vector<int64_t> out_dims(dims);
    for (size_t d = 0; d < dims.size(); ++d) out_dims[d] += (*pads)[d].first + (*pads)[d].second;
    auto shape = TensorShape::Make(out_dims);
    TFD_OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, *shape, &out));
    if (out->num_elements() == 0) return;
    ForEachMirrored(dims, out_dims, *pads, symmetric_,
                    [&](int64_t to, int64_t from) { CopyElements(in, from, *out, to, 1); });
  }
};

// dy of the padded shape summed back onto the input's: each padded element
// onto the element it copied.
class MirrorPadGradOp : public MirrorKernel {
 public:
  using MirrorKernel::MirrorKernel;

  void Compute(OpKernelContext& ctx) override {
    const Tensor& dy = ctx.input(0);
    auto pads = ReadPaddings(ctx.input(1), dy.rank());
    TFD_OP_REQUIRES_OK(ctx, pads.status());
    std::vector<int64_t> dims(dy.shape().dims());
    for (size_t d = 0; d < dims.size(); ++d) {
      dims[d] -= (*pads)[d].first + (*pads)[d].second;
      TFD_OP_REQUIRES(ctx, dims[d] >= 0,
                      errors::InvalidArgument("paddings of dimension ", d, " sum past its size ",
                                              dy.dim(static_cast<int>(d))));
    }
    TFD_OP_REQUIRES_OK(ctx, CheckFits(*pads, dims, symmetric_));
    Tensor* dx = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, TensorShape(dims), &dx));  // zero-filled
    if (dy.num_elements() == 0) return;
    TFD_SWITCH_NUMERIC(
        dy.dtype(), T,
        {
          const T* g = dy.data<T>();
          T* sum = dx->data<T>();
          ForEachMirrored(dims, dy.shape().dims(), *pads, symmetric_,
                          [&](int64_t o, int64_t i) { sum[i] += g[o]; });
        },
        ctx.SetStatus(
            errors::InvalidArgument("MirrorPadGrad: unsupported dtype ", DTypeName(dy.dtype()))));
  }
};

// The input's shape: the padded one, each dimension shrunk by its paddings.
Status MirrorPadGradShape(InferenceContext& c) {
  const PartialShape& dy = c.input(0);
  const Tensor* value = c.input_value(1);
  if (!dy.rank_known() || value == nullptr) {
    c.set_output(
        0, dy.rank_known() ? PartialShape::UnknownOfRank(dy.rank()) : PartialShape::Unknown());
    return OkStatus();
  }
  TFD_ASSIGN_OR_RETURN(Paddings pads, ReadPaddings(*value, dy.rank()));
  std::vector<int64_t> dims(dy.rank(), -1);
  for (int d = 0; d < dy.rank(); ++d) {
    if (dy.dim(d) >= 0) dims[d] = dy.dim(d) - pads[d].first - pads[d].second;
  }
  c.set_output(0, PartialShape(std::move(dims)));
  return OkStatus();
}

AttrMap ModeOf(const GradInputs& in) {
  auto mode = in.GetAttr<std::string>("mode");
  return {{"mode", mode.ok() ? *mode : std::string()}};
}

Status MirrorPadGrad(Scope& s, const GradInputs& in, std::vector<Output>* dx) {
  (*dx)[0] = grad::Op(s, "MirrorPadGrad", {in.dy[0], in.inputs[1]}, ModeOf(in));
  return OkStatus();
}

Status MirrorPadGradGrad(Scope& s, const GradInputs& in, std::vector<Output>* dx) {
  (*dx)[0] = grad::Op(s, "MirrorPad", {in.dy[0], in.inputs[1]}, ModeOf(in));
  return OkStatus();
}

}  // namespace

Status RegisterMirrorPadOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<MirrorPadOp>(
      OpDefBuilder("MirrorPad")
          .Input("input: T")
          .Input("paddings: Tpaddings")
          .Output("output: T")
          .Attr("T: type")
          .Attr("Tpaddings: {int32, int64} = int32")
          .Attr("mode: string")
          .Doc("input with paddings[d][0] elements before and paddings[d][1] after it in each "
               "dimension d, mirrored from the input: REFLECT leaves the edge out (at most "
               "dim - 1 a side), SYMMETRIC repeats it (at most dim). Shape: input's, each "
               "dimension grown by its two paddings."),
      PaddedShape));
  TFD_RETURN_IF_ERROR(r.Add<MirrorPadGradOp>(
      OpDefBuilder("MirrorPadGrad")
          .Input("input: T")
          .Input("paddings: Tpaddings")
          .Output("output: T")
          .Attr("T: {float32, float64, int32, int64, uint8}")
          .Attr("Tpaddings: {int32, int64} = int32")
          .Attr("mode: string")
          .Doc("MirrorPad's gradient: input (of the padded shape) summed back onto the shape "
               "before padding, each padded element onto the element it copied."),
      MirrorPadGradShape));
  TFD_RETURN_IF_ERROR(grad::Register(r, "MirrorPad", MirrorPadGrad));
  return grad::Register(r, "MirrorPadGrad", MirrorPadGradGrad);
}

}  // namespace tfd::kernels::array
