// Unique: the distinct values of a vector in order of first appearance, and
// for each element the position of its value among them. embedding_lookup
// uses it so that an id repeated in a batch is looked up (and its gradient
// sent) once.
#include <string>
#include <unordered_map>

#include "common/op_kernel.h"
#include "kernels/array/array_ops_internal.h"

namespace tfd::kernels::array {
namespace {

// y and idx for x of element type T; Index is idx's element type. Values
// compare with ==, as TensorFlow's hash map does: 0.0 and -0.0 are one
// value (the first seen is kept), and every NaN is a value of its own.
template <typename T, typename Index>
Status UniqueOf(OpKernelContext& ctx, const Tensor& x) {
  const int64_t n = x.num_elements();
  const T* in = x.data<T>();
  Tensor* idx = nullptr;
  TFD_RETURN_IF_ERROR(ctx.allocate_output_for_overwrite(1, x.shape(), &idx));
  std::unordered_map<T, Index> first;  // value -> its position in y
  first.reserve(static_cast<size_t>(n));
  std::vector<int64_t> kept;  // positions in x of y's values
  for (int64_t i = 0; i < n; ++i) {
    auto [it, inserted] = first.try_emplace(in[i], static_cast<Index>(kept.size()));
    if (inserted) kept.push_back(i);
    idx->data<Index>()[i] = it->second;
  }
  Tensor* y = nullptr;
  TFD_RETURN_IF_ERROR(
      ctx.allocate_output(0, TensorShape({static_cast<int64_t>(kept.size())}), &y));
  for (size_t j = 0; j < kept.size(); ++j) y->data<T>()[j] = in[kept[j]];
  return OkStatus();
}

class UniqueOp : public OpKernel {
 public:
  explicit UniqueOp(OpKernelConstruction& c) : OpKernel(c), out_idx_(c.output_type(1)) {}

  void Compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    TFD_OP_REQUIRES(ctx, x.rank() == 1,
                    errors::InvalidArgument("x must be a vector, got ", x.Describe()));
    // idx counts positions in y, which has at most as many elements as x.
    TFD_OP_REQUIRES(ctx, out_idx_ == DType::kInt64 || x.num_elements() <= INT32_MAX,
                    errors::InvalidArgument("x has ", x.num_elements(),
                                            " elements, too many for out_idx int32"));
    Status s;
    TFD_SWITCH_ALL(x.dtype(), T,
                   s = (out_idx_ == DType::kInt32 ? UniqueOf<T, int32_t>(ctx, x)
                                                  : UniqueOf<T, int64_t>(ctx, x)),
                   s = errors::InvalidArgument("Unique cannot take ", x.Describe()));
    TFD_OP_REQUIRES_OK(ctx, s);
  }

 private:
  const DType out_idx_;
};

Status UniqueShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(c.WithRank(0, 1));
  c.set_output(0, PartialShape({-1}));
  c.set_output(1, c.input(0).rank_known() ? c.input(0) : PartialShape({-1}));
  return OkStatus();
}

}  // namespace

Status RegisterUniqueOps(OpRegistry& r) {
  return r.Add<UniqueOp>(
      OpDefBuilder("Unique")
          .Input("x: T")
          .Output("y: T")
          .Output("idx: out_idx")
          .Attr("T: type")
          .Attr("out_idx: {int32, int64} = int32")
          .Doc("The distinct values of the vector x in order of first appearance (y), and for "
               "each element of x the index of its value in y (idx), so x = Gather(y, idx). "
               "Values compare with ==: 0 and -0 are one value, each NaN is its own. Shape: y "
               "[?], idx x's."),
      UniqueShape);
}

}  // namespace tfd::kernels::array
