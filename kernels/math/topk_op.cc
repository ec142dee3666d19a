// TopKV2: the k largest entries of each row (the last dimension) and their
// indices, largest first (tf.math.top_k). Equal values keep their order
// along the row, so the lower index comes first, as TensorFlow's; NaN counts
// as larger than every number (numpy's sort order, torch.topk's), so NaNs
// come first rather than in an undefined place. With sorted = false the same
// k entries come in index order. Its gradient routes dy to the indices.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>
#include <vector>

#include "common/op_kernel.h"
#include "kernels/math/grad_util.h"
#include "kernels/math/math_ops_internal.h"

namespace tfd::kernels {
namespace {

// Whether row element a goes before b: larger first, NaN largest, ties by
// the lower index.
template <typename T>
bool Before(const T* row, int32_t a, int32_t b) {
  const T va = row[a], vb = row[b];
  if constexpr (std::is_floating_point_v<T>) {
    const bool na = std::isnan(va), nb = std::isnan(vb);
    if (na || nb) return na && nb ? a < b : na;
  }
  return va > vb || (va == vb && a < b);
}

template <typename T>
void TopKRows(const Tensor& x, int64_t k, bool sorted, Tensor& values, Tensor& indices) {
  const int64_t n = x.rank() == 0 ? 1 : x.dim(x.rank() - 1);
  const int64_t rows = n == 0 ? 0 : x.num_elements() / n;
  std::vector<int32_t> order(n);
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = x.data<T>() + r * n;
    std::iota(order.begin(), order.end(), 0);
    auto before = [row](int32_t a, int32_t b) { return Before(row, a, b); };
    std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
    if (!sorted) std::sort(order.begin(), order.begin() + k);
    for (int64_t j = 0; j < k; ++j) {
      values.data<T>()[r * k + j] = row[order[j]];
      indices.data<int32_t>()[r * k + j] = order[j];
    }
  }
}

class TopKOp : public OpKernel {
 public:
  explicit TopKOp(OpKernelConstruction& c) : OpKernel(c) {
    c.SetStatus(c.GetAttr("sorted", &sorted_));
  }

  void Compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& kt = ctx.input(1);
    TFD_OP_REQUIRES(ctx, kt.rank() == 0 && kt.dtype() == DType::kInt32,
                    errors::InvalidArgument("TopKV2 '", name(), "': k must be an int32 scalar, "
                                            "got ", kt.Describe()));
    const int64_t k = kt.data<int32_t>()[0];
    TFD_OP_REQUIRES(ctx, x.rank() >= 1,
                    errors::InvalidArgument("TopKV2 '", name(), "': input must have rank >= 1, "
                                            "got a scalar"));
    const int64_t n = x.dim(x.rank() - 1);
    TFD_OP_REQUIRES(ctx, k >= 0 && k <= n,
                    errors::InvalidArgument("TopKV2 '", name(), "': k must be in [0, ", n,
                                            "] (the last dimension of input ",
                                            x.shape().ToString(), "), got ", k));
    std::vector<int64_t> dims = x.shape().dims();
    dims.back() = k;
    Tensor *values = nullptr, *indices = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, TensorShape(dims), &values));
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(1, TensorShape(dims), &indices));
    if (values->num_elements() == 0) return;
    TFD_SWITCH_NUMERIC(x.dtype(), T, (TopKRows<T>(x, k, sorted_, *values, *indices)), {});
  }

 private:
  bool sorted_ = true;
};

Status TopKShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(c.WithRank(1, 0));
  const PartialShape& x = c.input(0);
  if (!x.rank_known()) {
    c.set_output(0, PartialShape::Unknown());
    c.set_output(1, PartialShape::Unknown());
    return OkStatus();
  }
  if (x.rank() < 1) return errors::InvalidArgument("TopKV2: input must have rank >= 1");
  std::vector<int64_t> dims = x.dims();
  const auto k = c.InputAsInts(1);
  dims.back() = k && !k->empty() ? (*k)[0] : -1;
  if (k && !k->empty() && x.dims().back() >= 0 && ((*k)[0] < 0 || (*k)[0] > x.dims().back())) {
    return errors::InvalidArgument("TopKV2: k must be in [0, ", x.dims().back(), "], got ",
                                   (*k)[0]);
  }
  c.set_output(0, PartialShape(dims));
  c.set_output(1, PartialShape(dims));
  return OkStatus();
}

// dx: zeros shaped like x, with dy added at each row's chosen indices
// (TensorFlow's _TopKGrad, through UnsortedSegmentSum over flat positions).
Status TopKGrad(Scope& s, const GradInputs& in, std::vector<Output>* dx) {
  const Output &x = in.inputs[0], &indices = in.outputs[1], &dy = in.dy[0];
  if (!dy.valid()) return OkStatus();
  const Output shape = grad::Op(s, "Shape", {x});
  auto slice = [&](int64_t b, int64_t e, int64_t shrink) {
    return grad::Op(s, "StridedSlice",
                    {shape, grad::IntVector(s, {b}), grad::IntVector(s, {e}),
                     grad::IntVector(s, {1})},
                    {{"shrink_axis_mask", shrink}, {"end_mask", int64_t{e == 0 ? 1 : 0}}});
  };
  const Output n = slice(-1, 0, 1);     // the row length
  const Output outer = slice(0, -1, 0);  // the row dimensions
  const Output rows = grad::Op(s, "Prod", {outer, grad::IntScalar(s, 0)});
  const Output starts = grad::Mul(
      s, grad::Op(s, "Range", {grad::IntScalar(s, 0), rows, grad::IntScalar(s, 1)}), n);
  const Output offsets = grad::Op(
      s, "ExpandDims", {grad::Reshape(s, starts, outer), grad::IntScalar(s, -1)});
  const Output flat_ids = grad::Add(s, indices, offsets);
  const Output size = grad::Op(s, "Size", {x});
  (*dx)[0] = grad::Reshape(s, grad::Op(s, "UnsortedSegmentSum", {dy, flat_ids, size}), shape);
  return OkStatus();
}

}  // namespace

Status RegisterTopKOp(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<TopKOp>(
      OpDefBuilder("TopKV2")
          .Input("input: T")
          .Input("k: int32")
          .Output("values: T")
          .Output("indices: int32")
          .Attr("sorted: bool = true")
          .Attr("T: {float32, float64, int32, int64}")
          .Doc("The k largest entries of each row of input (its last dimension, of length at "
               "least k) and their indices in the row: largest first, equal values by lower "
               "index, NaN above every number; with sorted = false, the same entries in index "
               "order. Shape: input's with the last dimension k."),
      TopKShape));
  return grad::Register(r, "TopKV2", TopKGrad);
}

}  // namespace tfd::kernels
