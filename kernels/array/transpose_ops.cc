// Rearranging and repeating elements: Transpose (permute dimensions) and
// Tile (repeat along each dimension).
#include "common/op_kernel.h"
#include "kernels/array/array_ops_internal.h"
#include "kernels/array/array_util.h"

namespace tfd::kernels::array {
namespace {

// perm must hold each of 0..rank-1 exactly once.
Status CheckPermutation(const std::vector<int64_t>& perm, int rank) {
  if (static_cast<int>(perm.size()) != rank) {
    return errors::InvalidArgument("perm must have length ", rank, " (the rank of x), got ",
                                   perm.size(), " entries");
  }
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] < 0 || perm[i] >= rank) {
      return errors::InvalidArgument("perm[", i, "] = ", perm[i], " is not in [0, ", rank, ")");
    }
    if (seen[perm[i]]) {
      return errors::InvalidArgument("perm ", PartialShape(perm).ToString(),
                                     " is not a permutation: ", perm[i], " appears twice");
    }
    seen[perm[i]] = true;
  }
  return OkStatus();
}

// Walks the output in order; the innermost output dimension is a strided
// run through the input.
template <typename T>
void TransposeTyped(const Tensor& in, const std::vector<int64_t>& perm, const Tensor& out) {
  const int rank = in.rank();
  std::vector<int64_t> in_strides(rank, 1);
  for (int d = rank - 2; d >= 0; --d) in_strides[d] = in_strides[d + 1] * in.dim(d + 1);
  std::vector<int64_t> stride(rank);  // input stride of each output dimension
  for (int d = 0; d < rank; ++d) stride[d] = in_strides[perm[d]];
  const T* src = in.data<T>();
  T* dst = out.data<T>();
  const int64_t row = out.dim(rank - 1);
  const int64_t row_stride = stride[rank - 1];
  std::vector<int64_t> index(rank - 1, 0);
  for (int64_t pos = 0; pos < out.num_elements(); pos += row) {
    int64_t from = 0;
    for (int d = 0; d < rank - 1; ++d) from += index[d] * stride[d];
    for (int64_t k = 0; k < row; ++k) dst[pos + k] = src[from + k * row_stride];
    for (int d = rank - 2; d >= 0 && ++index[d] == out.dim(d); --d) index[d] = 0;
  }
}

class TransposeOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    const Tensor& in = ctx.input(0);
    TFD_OP_REQUIRES(ctx, ctx.input(1).rank() == 1,
                    errors::InvalidArgument("perm must be a vector, got ",
                                            ctx.input(1).Describe()));
    auto perm = IntsFromTensor(ctx.input(1), "perm");
    TFD_OP_REQUIRES_OK(ctx, perm.status());
    TFD_OP_REQUIRES_OK(ctx, CheckPermutation(*perm, in.rank()));
    std::vector<int64_t> dims(in.rank());
    for (int d = 0; d < in.rank(); ++d) dims[d] = in.dim(static_cast<int>((*perm)[d]));
    const TensorShape out_shape(std::move(dims));

    // Dimensions of size 1 can move freely: if the others keep their order
    // the element order is unchanged and a reshaped view is the answer.
    int64_t last = -1;
    bool same_order = true;
    for (int64_t p : *perm) {
      if (in.dim(static_cast<int>(p)) == 1) continue;
      same_order = same_order && p > last;
      last = p;
    }
    if (same_order || in.num_elements() == 0) {
      auto view = in.Reshaped(out_shape);
      TFD_OP_REQUIRES_OK(ctx, view.status());
      ctx.set_output(0, std::move(*view));
      return;
    }
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, out_shape, &out));
    TFD_SWITCH_ALL(in.dtype(), T, TransposeTyped<T>(in, *perm, *out),
                   ctx.SetStatus(errors::InvalidArgument("cannot transpose ", in.Describe())));
  }
};

Status TransposeShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(c.WithRank(1, 1));
  const PartialShape& x = c.input(0);
  const PartialShape& perm_shape = c.input(1);
  int rank = x.rank();
  if (perm_shape.rank_known() && perm_shape.dim(0) >= 0) {
    if (rank >= 0 && perm_shape.dim(0) != rank) {
      return errors::InvalidArgument("input 1 (perm) must have length ", rank,
                                     " (the rank of x) but has shape ", perm_shape.ToString());
    }
    rank = static_cast<int>(perm_shape.dim(0));
  }
  if (rank < 0) {
    c.set_output(0, PartialShape::Unknown());
    return OkStatus();
  }
  auto perm = c.InputAsInts(1);
  if (!perm) {
    c.set_output(0, PartialShape::UnknownOfRank(rank));
    return OkStatus();
  }
  TFD_RETURN_IF_ERROR(CheckPermutation(*perm, rank));
  std::vector<int64_t> dims(rank, -1);
  if (x.rank_known()) {
    for (int d = 0; d < rank; ++d) dims[d] = x.dim(static_cast<int>((*perm)[d]));
  }
  c.set_output(0, PartialShape(std::move(dims)));
  return OkStatus();
}

// Writes the tiling of the input block at dimensions [d, rank) that starts
// at `from` to `to` in the output: one copy of the block's rows, then that
// copy repeated, so each level is a few large copies rather than many
// small ones.
void TileDim(const Tensor& in, const Tensor& out, const std::vector<int64_t>& multiples,
             const std::vector<int64_t>& in_strides, const std::vector<int64_t>& out_strides,
             int d, int64_t from, int64_t to) {
  const int64_t n = in.dim(d);
  if (d == in.rank() - 1) {
    for (int64_t m = 0; m < multiples[d]; ++m) CopyElements(in, from, out, to + m * n, n);
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    TileDim(in, out, multiples, in_strides, out_strides, d + 1, from + i * in_strides[d],
            to + i * out_strides[d]);
  }
  const int64_t block = n * out_strides[d];
  for (int64_t m = 1; m < multiples[d]; ++m) CopyElements(out, to, out, to + m * block, block);
}

Status CheckMultiples(const std::vector<int64_t>& multiples, int rank) {
  if (static_cast<int>(multiples.size()) != rank) {
    return errors::InvalidArgument("multiples must have length ", rank,
                                   " (the rank of input), got ", multiples.size(), " entries");
  }
  for (size_t i = 0; i < multiples.size(); ++i) {
    if (multiples[i] < 0) {
      return errors::InvalidArgument("multiples[", i, "] must be non-negative, got ",
                                     multiples[i]);
    }
  }
  return OkStatus();
}

class TileOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    const Tensor& in = ctx.input(0);
    TFD_OP_REQUIRES(ctx, ctx.input(1).rank() == 1,
                    errors::InvalidArgument("multiples must be a vector, got ",
                                            ctx.input(1).Describe()));
    auto multiples = IntsFromTensor(ctx.input(1), "multiples");
    TFD_OP_REQUIRES_OK(ctx, multiples.status());
    TFD_OP_REQUIRES_OK(ctx, CheckMultiples(*multiples, in.rank()));
    const int rank = in.rank();
    std::vector<int64_t> dims(rank);
    bool all_ones = true;
    for (int d = 0; d < rank; ++d) {
      all_ones = all_ones && (*multiples)[d] == 1;
      if (__builtin_mul_overflow(in.dim(d), (*multiples)[d], &dims[d])) {
        dims[d] = kMaxTensorElements + 1;  // refused by Make below
      }
    }
    if (all_ones) {
      ctx.set_output(0, in);
      return;
    }
    auto shape = TensorShape::Make(std::move(dims));
    TFD_OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, *shape, &out));
    if (out->num_elements() == 0) return;
    std::vector<int64_t> in_strides(rank, 1), out_strides(rank, 1);
    for (int d = rank - 2; d >= 0; --d) {
      in_strides[d] = in_strides[d + 1] * in.dim(d + 1);
      out_strides[d] = out_strides[d + 1] * out->dim(d + 1);
    }
    TileDim(in, *out, *multiples, in_strides, out_strides, 0, 0, 0);
  }
};

Status TileShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(c.WithRank(1, 1));
  const PartialShape& x = c.input(0);
  int rank = x.rank();
  const PartialShape& m_shape = c.input(1);
  if (m_shape.rank_known() && m_shape.dim(0) >= 0) {
    if (rank >= 0 && m_shape.dim(0) != rank) {
      return errors::InvalidArgument("input 1 (multiples) must have length ", rank,
                                     " (the rank of input 0) but has shape ",
                                     m_shape.ToString());
    }
    rank = static_cast<int>(m_shape.dim(0));
  }
  if (rank < 0) {
    c.set_output(0, PartialShape::Unknown());
    return OkStatus();
  }
  auto multiples = c.InputAsInts(1);
  if (!multiples) {
    c.set_output(0, PartialShape::UnknownOfRank(rank));
    return OkStatus();
  }
  TFD_RETURN_IF_ERROR(CheckMultiples(*multiples, rank));
  std::vector<int64_t> dims(rank, -1);
  for (int d = 0; d < rank; ++d) {
    const int64_t in_dim = x.rank_known() ? x.dim(d) : -1;
    // A zero multiple empties the dimension whatever its size.
    if ((*multiples)[d] == 0) {
      dims[d] = 0;
    } else if (in_dim >= 0) {
      if (__builtin_mul_overflow(in_dim, (*multiples)[d], &dims[d]) ||
          dims[d] > kMaxTensorElements) {
        return errors::InvalidArgument("tiling dimension ", d, " of size ", in_dim, " ",
                                       (*multiples)[d], " times exceeds ", kMaxTensorElements,
                                       " elements");
      }
    }
  }
  c.set_output(0, PartialShape(std::move(dims)));
  return OkStatus();
}

}  // namespace

Status RegisterTransposeOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<TransposeOp>(
      OpDefBuilder("Transpose")
          .Input("x: T")
          .Input("perm: Tperm")
          .Output("y: T")
          .Attr("T: type")
          .Attr("Tperm: {int32, int64} = int32")
          .Doc("x with its dimensions permuted: dimension i of y is dimension perm[i] of x. "
               "Shape: x's dims taken in the order perm."),
      TransposeShape));
  TFD_RETURN_IF_ERROR(r.Add<TileOp>(
      OpDefBuilder("Tile")
          .Input("input: T")
          .Input("multiples: Tmultiples")
          .Output("output: T")
          .Attr("T: type")
          .Attr("Tmultiples: {int32, int64} = int32")
          .Doc("input repeated multiples[i] times along each dimension i. Shape: input's "
               "dims times multiples, element-wise."),
      TileShape));
  return OkStatus();
}

}  // namespace tfd::kernels::array
