// UnsortedSegmentSum (rows of data added into the output row their segment
// id names: Gather's gradient) and InvertPermutation (Transpose's gradient
// when the permutation is only known at run time).
#include "common/op_kernel.h"
#include "common/tensor_eigen.h"
#include "kernels/array/array_ops_internal.h"
#include "kernels/array/array_util.h"

namespace tfd::kernels::array {
namespace {

class UnsortedSegmentSumOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    const Tensor& data = ctx.input(0);
    const Tensor& ids = ctx.input(1);
    auto num = IntFromScalar(ctx.input(2), "num_segments");
    TFD_OP_REQUIRES_OK(ctx, num.status());
    TFD_OP_REQUIRES(ctx, *num >= 0,
                    errors::InvalidArgument("num_segments must be >= 0, got ", *num));
    bool prefix = ids.rank() <= data.rank();
    for (int d = 0; prefix && d < ids.rank(); ++d) prefix = ids.dim(d) == data.dim(d);
    TFD_OP_REQUIRES(ctx, prefix,
                    errors::InvalidArgument("segment_ids shape ", ids.shape().ToString(),
                                            " must be a prefix of data shape ",
                                            data.shape().ToString()));
    std::vector<int64_t> dims{*num};
    dims.insert(dims.end(), data.shape().dims().begin() + ids.rank(), data.shape().dims().end());
    auto shape = TensorShape::Make(std::move(dims));
    TFD_OP_REQUIRES_OK(ctx, shape.status());
    const int64_t n = ids.num_elements();
    const int64_t inner = n == 0 ? 0 : data.num_elements() / n;
    std::vector<int64_t> rows(n);
    for (int64_t i = 0; i < n; ++i) {
      rows[i] = ids.dtype() == DType::kInt32 ? ids.data<int32_t>()[i] : ids.data<int64_t>()[i];
      TFD_OP_REQUIRES(ctx, rows[i] >= 0 && rows[i] < *num,
                      errors::InvalidArgument("segment_ids[", i, "] = ", rows[i],
                                              " is not in [0, ", *num, ") (num_segments)"));
    }
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, *shape, &out));  // zero-filled
    TFD_SWITCH_NUMERIC(data.dtype(), T, {
      const T* src = data.data<T>();
      T* dst = out->data<T>();
      for (int64_t i = 0; i < n; ++i) {
        T* row = dst + rows[i] * inner;
        for (int64_t k = 0; k < inner; ++k) row[k] += src[i * inner + k];
      }
    }, {
      ctx.SetStatus(errors::InvalidArgument("UnsortedSegmentSum needs a numeric tensor, got ",
                                            data.Describe()));
    });
  }
};

Status UnsortedSegmentSumShape(InferenceContext& c) {
  const PartialShape& data = c.input(0);
  const PartialShape& ids = c.input(1);
  if (c.input(2).rank_known() && c.input(2).rank() > 1) {
    return errors::InvalidArgument("input 2 (num_segments) must be a scalar but has shape ",
                                   c.input(2).ToString());
  }
  int64_t num = -1;
  if (auto v = c.InputAsInts(2); v && v->size() == 1) num = (*v)[0];
  if (!data.rank_known() || !ids.rank_known()) {
    c.set_output(0, PartialShape::Unknown());
    return OkStatus();
  }
  if (ids.rank() > data.rank()) {
    return errors::InvalidArgument("segment_ids (input 1) of shape ", ids.ToString(),
                                   " must be a prefix of data's shape ", data.ToString());
  }
  std::vector<int64_t> dims{num};
  for (int d = 0; d < data.rank(); ++d) {
    if (d >= ids.rank()) {
      dims.push_back(data.dim(d));
    } else if (ids.dim(d) >= 0 && data.dim(d) >= 0 && ids.dim(d) != data.dim(d)) {
      return errors::InvalidArgument("segment_ids (input 1) of shape ", ids.ToString(),
                                     " must be a prefix of data's shape ", data.ToString());
    }
  }
  c.set_output(0, PartialShape(std::move(dims)));
  return OkStatus();
}

class InvertPermutationOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    TFD_OP_REQUIRES(ctx, x.rank() == 1,
                    errors::InvalidArgument("x must be a vector, got ", x.Describe()));
    auto perm = IntsFromTensor(x, "x");
    TFD_OP_REQUIRES_OK(ctx, perm.status());
    const int64_t n = static_cast<int64_t>(perm->size());
    std::vector<int64_t> inverse(n, -1);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t p = (*perm)[i];
      TFD_OP_REQUIRES(ctx, p >= 0 && p < n && inverse[p] < 0,
                      errors::InvalidArgument("x is not a permutation of [0, ", n, "): x[", i,
                                              "] = ", p));
      inverse[p] = i;
    }
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, x.shape(), &out));
    for (int64_t i = 0; i < n; ++i) {
      if (x.dtype() == DType::kInt32) {
        out->data<int32_t>()[i] = static_cast<int32_t>(inverse[i]);
      } else {
        out->data<int64_t>()[i] = inverse[i];
      }
    }
  }
};

Status InvertPermutationShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(c.WithRank(0, 1));
  c.set_output(0, c.input(0));
  return OkStatus();
}

}  // namespace

Status RegisterSegmentOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<UnsortedSegmentSumOp>(
      OpDefBuilder("UnsortedSegmentSum")
          .Input("data: T")
          .Input("segment_ids: Tindices")
          .Input("num_segments: Tnumsegments")
          .Output("output: T")
          .Attr("T: {float32, float64, int32, int64}")
          .Attr("Tindices: {int32, int64}")
          .Attr("Tnumsegments: {int32, int64} = int32")
          .Doc("output[j, ...] is the sum of data[i..., ...] over the indices i whose "
               "segment_ids[i...] is j (0 where none is); every id must lie in [0, "
               "num_segments). Shape: [num_segments] + data's shape after segment_ids' "
               "(which must be a prefix of it)."),
      UnsortedSegmentSumShape));
  return r.Add<InvertPermutationOp>(
      OpDefBuilder("InvertPermutation")
          .Input("x: T")
          .Output("y: T")
          .Attr("T: {int32, int64} = int32")
          .Doc("The inverse permutation: y[x[i]] = i; x must be a permutation of [0, n). "
               "Shape: x's (a vector)."),
      InvertPermutationShape);
}

}  // namespace tfd::kernels::array
