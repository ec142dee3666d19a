// Softmax and LogSoftmax over the last axis. Both subtract each row's
// maximum before exponentiating, so logits in the thousands neither
// overflow nor lose the row's shape.
#include "common/op_kernel.h"
#include "common/tensor_eigen.h"
#include "kernels/math/ieee_functors.h"
#include "kernels/nn/nn_internal.h"

namespace tfd::kernels::nn {
namespace {

template <typename T>
using Column = Eigen::Array<T, Eigen::Dynamic, 1>;

// logits viewed as [rows, last dim]; the caller has checked rank >= 1 and
// that the tensor is not empty.
template <typename T>
void SoftmaxRows(const Tensor& logits, Tensor& out, bool log) {
  const int64_t cols = logits.dim(logits.rank() - 1);
  const int64_t rows = logits.num_elements() / cols;
  MatrixMap<T> x_map = EigenMatrix<T>(logits, rows, cols);
  MatrixMap<T> y_map = EigenMatrix<T>(out, rows, cols);
  auto x = x_map.array();
  auto y = y_map.array();
  const Column<T> max = x.rowwise().redux(ieee::MaxOp<T>());  // NaN if any is
  y = x.colwise() - max;
  const Column<T> sum = y.unaryExpr(ieee::ExpOp<T>()).rowwise().sum();
  if (log) {
    y.colwise() -= sum.unaryExpr(ieee::LogOp<T>());
  } else {
    y = y.unaryExpr(ieee::ExpOp<T>());
    y.colwise() /= sum;
  }
}

class SoftmaxOp : public OpKernel {
 public:
  explicit SoftmaxOp(OpKernelConstruction& c) : OpKernel(c), log_(c.def().name == "LogSoftmax") {}

  void Compute(OpKernelContext& ctx) override {
    const Tensor& logits = ctx.input(0);
    TFD_OP_REQUIRES(ctx, logits.rank() >= 1,
                    errors::InvalidArgument("logits must have rank >= 1 but has shape ",
                                            logits.shape().ToString()));
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, logits.shape(), &out));
    if (logits.num_elements() == 0) return;
    TFD_SWITCH_FLOAT(logits.dtype(), T, (SoftmaxRows<T>(logits, *out, log_)),
                     ctx.SetStatus(UnsupportedDType(logits));
                     return;)
  }

 private:
  bool log_;
};

Status SoftmaxShape(InferenceContext& c) {
  if (c.input(0).rank_known() && c.input(0).rank() < 1) {
    return errors::InvalidArgument("input 0 (logits) must have rank >= 1 but has shape ",
                                   c.input(0).ToString());
  }
  c.set_output(0, c.input(0));
  return OkStatus();
}

}  // namespace

Status RegisterSoftmaxOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<SoftmaxOp>(
      OpDefBuilder("Softmax")
          .Input("logits: T")
          .Output("softmax: T")
          .Attr(kFloatTypeAttr)
          .Doc("exp(logits) / sum(exp(logits)) along the last axis, computed stably. "
               "Shape: unchanged; logits must have rank >= 1."),
      SoftmaxShape));
  TFD_RETURN_IF_ERROR(r.Add<SoftmaxOp>(
      OpDefBuilder("LogSoftmax")
          .Input("logits: T")
          .Output("logsoftmax: T")
          .Attr(kFloatTypeAttr)
          .Doc("logits - log(sum(exp(logits))) along the last axis, computed stably. "
               "Shape: unchanged; logits must have rank >= 1."),
      SoftmaxShape));
  return OkStatus();
}

}  // namespace tfd::kernels::nn
