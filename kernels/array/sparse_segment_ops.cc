// SparseSegmentSum / Mean / SqrtN: output[j] combines the rows data[indices[i]]
// whose segment_ids[i] is j (sorted ids). They are embedding_lookup_sparse's
// "sum", "mean" and "sqrtn" combiners over a multi-valued feature; their
// gradients are SparseSegmentSumGrad / MeanGrad / SqrtNGrad, which spread each
// segment's gradient back over the rows it read.
#include <cmath>
#include <string>
#include <vector>

#include "common/op_kernel.h"
#include "kernels/array/array_ops_internal.h"
#include "kernels/array/array_util.h"
#include "kernels/math/grad_util.h"

namespace tfd::kernels::array {
namespace {

enum class Combiner { kSum, kMean, kSqrtN };

const char* Name(Combiner c) {
  switch (c) {
    case Combiner::kSum: return "SparseSegmentSum";
    case Combiner::kMean: return "SparseSegmentMean";
    case Combiner::kSqrtN: return "SparseSegmentSqrtN";
  }
  return "";
}

// The weight of each row of a segment of `count` rows.
template <typename T>
T Weight(Combiner c, int64_t count) {
  if (c == Combiner::kMean) return T(1) / static_cast<T>(count);
  if (c == Combiner::kSqrtN) return T(1) / std::sqrt(static_cast<T>(count));
  return T(1);
}

// indices and segment_ids read and checked: vectors of one length, indices in
// [0, rows), segment ids >= 0 and sorted (and < segments when segments >= 0).
struct Segments {
  std::vector<int64_t> indices, ids;
};

StatusOr<Segments> ReadSegments(const Tensor& indices, const Tensor& ids, int64_t rows,
                                int64_t segments) {
  if (indices.rank() != 1 || ids.rank() != 1 || indices.dim(0) != ids.dim(0)) {
    return errors::InvalidArgument("indices and segment_ids must be vectors of one length, got ",
                                   indices.Describe(), " and ", ids.Describe());
  }
  Segments s;
  TFD_ASSIGN_OR_RETURN(s.indices, IntsFromTensor(indices, "indices"));
  TFD_ASSIGN_OR_RETURN(s.ids, IntsFromTensor(ids, "segment_ids"));
  for (size_t i = 0; i < s.ids.size(); ++i) {
    if (s.indices[i] < 0 || s.indices[i] >= rows) {
      return errors::InvalidArgument("indices[", i, "] = ", s.indices[i], " is not in [0, ", rows,
                                     ")");
    }
    if (s.ids[i] < 0 || (segments >= 0 && s.ids[i] >= segments)) {
      return errors::InvalidArgument("segment_ids[", i, "] = ", s.ids[i], " is not in [0, ",
                                     segments >= 0 ? std::to_string(segments) : "inf", ")");
    }
    if (i > 0 && s.ids[i] < s.ids[i - 1]) {
      return errors::InvalidArgument("segment_ids must be sorted, but segment_ids[", i, "] = ",
                                     s.ids[i], " follows ", s.ids[i - 1]);
    }
  }
  return s;
}

// out[ids[i]] += weight(segment) * in[from[i]] for every i, rows of `inner`.
template <typename T>
void Combine(Combiner c, const std::vector<int64_t>& from, const std::vector<int64_t>& to,
             const std::vector<int64_t>& seg_of, const std::vector<int64_t>& counts, const T* in,
             T* out, int64_t inner) {
  for (size_t i = 0; i < from.size(); ++i) {
    const T w = Weight<T>(c, counts[seg_of[i]]);
    const T* src = in + from[i] * inner;
    T* dst = out + to[i] * inner;
    for (int64_t k = 0; k < inner; ++k) dst[k] += c == Combiner::kSum ? src[k] : src[k] * w;
  }
}

// The forward op sums each segment, then divides the sum (by the count or
// its square root), as TensorFlow does: a mean of large values rounds as
// numpy's would.
template <typename T>
void SumThenDivide(Combiner c, const Segments& seg, const std::vector<int64_t>& counts,
                   const T* in, T* out, int64_t inner) {
  Combine<T>(Combiner::kSum, seg.indices, seg.ids, seg.ids, counts, in, out, inner);
  if (c == Combiner::kSum) return;
  for (size_t j = 0; j < counts.size(); ++j) {
    if (counts[j] == 0) continue;
    const T d = c == Combiner::kMean ? static_cast<T>(counts[j])
                                     : static_cast<T>(std::sqrt(static_cast<double>(counts[j])));
    for (int64_t k = 0; k < inner; ++k) out[j * inner + k] /= d;
  }
}

std::vector<int64_t> Counts(const std::vector<int64_t>& ids, int64_t segments) {
  std::vector<int64_t> counts(segments, 0);
  for (int64_t id : ids) ++counts[id];
  return counts;
}

template <Combiner kC>
class SparseSegmentOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    const Tensor& data = ctx.input(0);
    TFD_OP_REQUIRES(ctx, data.rank() >= 1,
                    errors::InvalidArgument("data must have rank >= 1, got ", data.Describe()));
    auto seg = ReadSegments(ctx.input(1), ctx.input(2), data.dim(0), -1);
    TFD_OP_REQUIRES_OK(ctx, seg.status());
    const int64_t segments = seg->ids.empty() ? 0 : seg->ids.back() + 1;
    std::vector<int64_t> dims = data.shape().dims();
    dims[0] = segments;
    auto shape = TensorShape::Make(std::move(dims));
    TFD_OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, *shape, &out));  // empty segments stay 0
    const int64_t inner = DimProduct(data.shape().dims(), 1, data.rank());
    const std::vector<int64_t> counts = Counts(seg->ids, segments);
    TFD_SWITCH_NUMERIC(data.dtype(), T,
                       SumThenDivide<T>(kC, *seg, counts, data.data<T>(), out->data<T>(), inner),
                       ctx.SetStatus(errors::InvalidArgument(Name(kC), " cannot take ",
                                                             data.Describe())));
  }
};

// output[indices[i]] += weight * grad[segment_ids[i]]; output has
// output_dim0 rows.
template <Combiner kC>
class SparseSegmentGradOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    const Tensor& grad = ctx.input(0);
    TFD_OP_REQUIRES(ctx, grad.rank() >= 1,
                    errors::InvalidArgument("grad must have rank >= 1, got ", grad.Describe()));
    auto rows = IntFromScalar(ctx.input(3), "output_dim0");
    TFD_OP_REQUIRES_OK(ctx, rows.status());
    TFD_OP_REQUIRES(ctx, *rows >= 0,
                    errors::InvalidArgument("output_dim0 must be >= 0, got ", *rows));
    auto seg = ReadSegments(ctx.input(1), ctx.input(2), *rows, grad.dim(0));
    TFD_OP_REQUIRES_OK(ctx, seg.status());
    std::vector<int64_t> dims = grad.shape().dims();
    dims[0] = *rows;
    auto shape = TensorShape::Make(std::move(dims));
    TFD_OP_REQUIRES_OK(ctx, shape.status());
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, *shape, &out));
    const int64_t inner = DimProduct(grad.shape().dims(), 1, grad.rank());
    const std::vector<int64_t> counts = Counts(seg->ids, grad.dim(0));
    TFD_SWITCH_FLOAT(grad.dtype(), T,
                     Combine<T>(kC, seg->ids, seg->indices, seg->ids, counts, grad.data<T>(),
                                out->data<T>(), inner),
                     ctx.SetStatus(errors::InvalidArgument("cannot take ", grad.Describe())));
  }
};

Status SparseSegmentShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(c.WithRank(1, 1));
  TFD_RETURN_IF_ERROR(c.WithRank(2, 1));
  const PartialShape& data = c.input(0);
  if (!data.rank_known()) {
    c.set_output(0, PartialShape::Unknown());
    return OkStatus();
  }
  if (data.rank() == 0) return errors::InvalidArgument("data (input 0) must have rank >= 1");
  std::vector<int64_t> dims = data.dims();
  dims[0] = -1;
  c.set_output(0, PartialShape(std::move(dims)));
  return OkStatus();
}

Status SparseSegmentGradShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(c.WithRank(1, 1));
  TFD_RETURN_IF_ERROR(c.WithRank(2, 1));
  TFD_RETURN_IF_ERROR(c.WithRank(3, 0));
  const PartialShape& grad = c.input(0);
  if (!grad.rank_known()) {
    c.set_output(0, PartialShape::Unknown());
    return OkStatus();
  }
  if (grad.rank() == 0) return errors::InvalidArgument("grad (input 0) must have rank >= 1");
  std::vector<int64_t> dims = grad.dims();
  dims[0] = -1;
  if (auto v = c.InputAsInts(3); v && v->size() == 1) dims[0] = (*v)[0];
  c.set_output(0, PartialShape(std::move(dims)));
  return OkStatus();
}

// TF's _SparseSegment*Grad: the op's Grad kernel with data's row count.
template <Combiner kC>
Status SparseSegmentGrad(Scope& s, const GradInputs& in, std::vector<Output>* dx) {
  const Output rows = grad::Op(
      s, "Slice", {grad::ShapeOf(s, in.inputs[0]), grad::IntVector(s, {0}), grad::IntVector(s, {1})});
  const Output dim0 = grad::Reshape(s, rows, grad::IntVector(s, {}));
  (*dx)[0] = grad::Op(s, std::string(Name(kC)) + "Grad",
                      {in.dy[0], in.inputs[1], in.inputs[2], dim0});
  return OkStatus();
}

template <Combiner kC>
Status AddCombiner(OpRegistry& r, const char* types, const std::string& what) {
  const std::string name = Name(kC);
  const char* ids = "segment_ids: Tsegmentids";
  TFD_RETURN_IF_ERROR(r.Add<SparseSegmentOp<kC>>(
      OpDefBuilder(name)
          .Input("data: T")
          .Input("indices: Tidx")
          .Input(ids)
          .Output("output: T")
          .Attr(std::string("T: ") + types)
          .Attr("Tidx: {int32, int64} = int32")
          .Attr("Tsegmentids: {int32, int64} = int32")
          .Doc("output[j] = " + what + " of the rows data[indices[i]] whose segment_ids[i] is j "
               "(0 for a segment with none); indices must be in [0, rows of data), segment_ids "
               "sorted and >= 0, both vectors of one length. Shape: [last segment id + 1] + "
               "data's shape[1:]."),
      SparseSegmentShape));
  TFD_RETURN_IF_ERROR(r.Add<SparseSegmentGradOp<kC>>(
      OpDefBuilder(name + "Grad")
          .Input("grad: T")
          .Input("indices: Tidx")
          .Input(ids)
          .Input("output_dim0: int32")
          .Output("output: T")
          .Attr("T: {float32, float64}")
          .Attr("Tidx: {int32, int64} = int32")
          .Attr("Tsegmentids: {int32, int64} = int32")
          .Doc("The gradient of " + name + ": output[indices[i]] += grad[segment_ids[i]] times "
               "the weight " + name + " gave that row. Shape: [output_dim0] + grad's shape[1:]."),
      SparseSegmentGradShape));
  return grad::Register(r, name, SparseSegmentGrad<kC>);
}

}  // namespace

Status RegisterSparseSegmentOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(AddCombiner<Combiner::kSum>(r, "{float32, float64, int32, int64}", "the sum"));
  TFD_RETURN_IF_ERROR(AddCombiner<Combiner::kMean>(r, "{float32, float64}", "the mean"));
  return AddCombiner<Combiner::kSqrtN>(r, "{float32, float64}",
                                       "the sum divided by the square root of the count");
}

}  // namespace tfd::kernels::array
