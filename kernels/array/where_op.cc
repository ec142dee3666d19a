// Where with one input (tf.where(condition), tf.boolean_mask's indices): the
// coordinates of the true (non-zero) elements, one row each, in row-major
// order. The three-input form is Select (kernels/math/select_op.cc).
#include <vector>

#include "common/gradients.h"
#include "common/op_kernel.h"
#include "kernels/array/array_ops_internal.h"
#include "kernels/math/grad_util.h"

namespace tfd::kernels::array {
namespace {

template <typename T>
std::vector<int64_t> TrueElements(const Tensor& x) {
  std::vector<int64_t> at;
  const T* v = x.data<T>();
  for (int64_t i = 0, n = x.num_elements(); i < n; ++i) {
    if (v[i] != T(0)) at.push_back(i);  // NaN is true, as a C++ cast to bool has it
  }
  return at;
}

class WhereOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    std::vector<int64_t> at;
    TFD_SWITCH_POD(x.dtype(), T, at = TrueElements<T>(x),
                   ctx.SetStatus(errors::InvalidArgument("Where cannot take ", x.Describe())));
    if (!ctx.status().ok()) return;
    const int rank = x.rank();
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(
        ctx, ctx.allocate_output(0, TensorShape({static_cast<int64_t>(at.size()), rank}), &out));
    int64_t* rows = out->data<int64_t>();
    for (size_t k = 0; k < at.size(); ++k) {
      // The flat index as coordinates, the last dimension fastest.
      int64_t rest = at[k];
      for (int d = rank - 1; d >= 0; --d) {
        rows[k * rank + d] = rest % x.dim(d);
        rest /= x.dim(d);
      }
    }
  }
};

Status WhereShape(InferenceContext& c) {
  const PartialShape& x = c.input(0);
  c.set_output(0, PartialShape({-1, x.rank_known() ? x.rank() : -1}));
  return OkStatus();
}

}  // namespace

Status RegisterWhereOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<WhereOp>(
      OpDefBuilder("Where")
          .Input("input: T")
          .Output("index: int64")
          .Attr("T: {float32, float64, int32, int64, uint8, bool} = bool")
          .Doc("The coordinates of input's true (non-zero; NaN counts) elements, one row per "
               "element in row-major order. Shape: [number true, rank of input]."),
      WhereShape));
  // Indices: no gradient flows back through them (TensorFlow's
  // NotDifferentiable).
  return grad::Register(r, "Where",
                        [](Scope&, const GradInputs&, std::vector<Output>*) { return OkStatus(); });
}

}  // namespace tfd::kernels::array
