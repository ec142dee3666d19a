// Select: pick elements from t or e by a bool condition, with TensorFlow 1's
// three condition shapes (scalar, same as t, or a vector over t's rows).
#include <algorithm>
#include <string>

#include "common/op_kernel.h"
#include "common/tensor_eigen.h"
#include "kernels/math/math_ops_internal.h"

namespace tfd::kernels {
namespace {

class SelectOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext& ctx) override {
    const Tensor& cond = ctx.input(0);
    const Tensor& t = ctx.input(1);
    const Tensor& e = ctx.input(2);
    TFD_OP_REQUIRES(ctx, t.shape() == e.shape(),
                    errors::InvalidArgument("t and e must have the same shape, but t is ",
                                            t.shape().ToString(), " and e is ",
                                            e.shape().ToString()));
    if (cond.rank() == 0) {
      // Tensors are immutable once produced, so the chosen one is shared.
      ctx.set_output(0, cond.scalar<bool>() ? t : e);
      return;
    }
    const bool same = cond.shape() == t.shape();
    const bool rows = cond.rank() == 1 && t.rank() >= 1 && cond.dim(0) == t.dim(0);
    TFD_OP_REQUIRES(ctx, same || rows,
                    errors::InvalidArgument(
                        "condition must be a scalar, have the shape of t (", t.shape().ToString(),
                        ") or be a vector of length t.dim(0); got shape ",
                        cond.shape().ToString()));
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, t.shape(), &out));
    TFD_SWITCH_ALL(t.dtype(), T, { Fill<T>(cond, t, e, same, *out); },
                   { ctx.SetStatus(errors::InvalidArgument("Select does not support dtype ",
                                                           DTypeName(t.dtype()))); });
  }

 private:
  template <typename T>
  static void Fill(const Tensor& cond, const Tensor& t, const Tensor& e, bool same, Tensor& out) {
    const bool* c = cond.data<bool>();
    const T* tv = t.data<T>();
    const T* ev = e.data<T>();
    T* o = out.data<T>();
    if (same) {
      if constexpr (std::is_arithmetic_v<T>) {
        EigenFlat<T>(out) = EigenFlat<bool>(cond).select(EigenFlat<T>(t), EigenFlat<T>(e));
      } else {
        for (int64_t i = 0; i < t.num_elements(); ++i) o[i] = c[i] ? tv[i] : ev[i];
      }
      return;
    }
    // A whole row of t or e per condition element.
    const int64_t n = t.dim(0);
    const int64_t row = n == 0 ? 0 : t.num_elements() / n;
    for (int64_t r = 0; r < n; ++r) {
      const T* src = (c[r] ? tv : ev) + r * row;
      std::copy(src, src + row, o + r * row);
    }
  }
};

Status SelectShape(InferenceContext& c) {
  TFD_ASSIGN_OR_RETURN(PartialShape out, c.input(1).Merge(c.input(2)));
  const PartialShape& cond = c.input(0);
  if (cond.rank_known() && out.rank_known() && cond.rank() != 0) {
    if (cond.rank() == 1 && out.rank() >= 1) {
      // A vector condition: either t's own shape (rank 1) or its rows.
      const int64_t cd = cond.dim(0), td = out.dim(0);
      if (cd >= 0 && td >= 0 && cd != td) {
        return errors::InvalidArgument("condition (input 0) of shape ", cond.ToString(),
                                       " must match dimension 0 of t, ", out.ToString());
      }
    } else {
      auto merged = out.Merge(cond);
      if (!merged.ok()) {
        return errors::InvalidArgument("condition (input 0) of shape ", cond.ToString(),
                                       " must be a scalar, have the shape of t ",
                                       out.ToString(), " or be a vector over its rows");
      }
      out = *merged;
    }
  }
  c.set_output(0, out);
  return OkStatus();
}

}  // namespace

Status RegisterSelectOp(OpRegistry& r) {
  return r.Add<SelectOp>(
      OpDefBuilder("Select")
          .Input("condition: bool")
          .Input("t: T")
          .Input("e: T")
          .Output("output: T")
          .Attr("T: type")
          .Doc("Elements of t where condition is true, of e elsewhere. condition is a scalar "
               "(choosing all of t or e), has t's shape, or is a vector of length t.dim(0) "
               "choosing whole rows. Shape: the shape of t, which must equal e's."),
      SelectShape);
}

}  // namespace tfd::kernels
