// Loss kernels: L2Loss, SoftmaxCrossEntropyWithLogits and
// SparseSoftmaxCrossEntropyWithLogits. The cross-entropies return the
// gradient with respect to the logits alongside the loss, as TensorFlow's
// do, and work from max-shifted logits so large logits stay finite.
#include "common/op_kernel.h"
#include "common/tensor_eigen.h"
#include "kernels/math/ieee_functors.h"
#include "kernels/math/pairwise_sum.h"
#include "kernels/nn/nn_internal.h"

namespace tfd::kernels::nn {
namespace {

template <typename T>
using Column = Eigen::Array<T, Eigen::Dynamic, 1>;

// ---- L2Loss ----------------------------------------------------------------

class L2LossOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext& ctx) override {
    const Tensor& t = ctx.input(0);
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, TensorShape(), &out));
    // Pairwise: a large weight matrix would lose precision to one running sum.
    TFD_SWITCH_FLOAT(t.dtype(), T,
                     (out->scalar<T>() = PairwiseSumOfSquares(t.data<T>(), t.num_elements()) / T(2)),
                     ctx.SetStatus(UnsupportedDType(t));
                     return;)
  }
};

// ---- Cross-entropies ---------------------------------------------------------

// Writes logits - rowmax into `shifted` and returns each row's
// log(sum(exp(shifted))). Needs at least one column.
template <typename T>
Column<T> ShiftAndLogSumExp(const MatrixMap<T>& logits, MatrixMap<T>& shifted) {
  const Column<T> max = logits.array().rowwise().redux(ieee::MaxOp<T>());
  shifted.array() = logits.array().colwise() - max;
  return shifted.array().unaryExpr(ieee::ExpOp<T>()).rowwise().sum().unaryExpr(ieee::LogOp<T>());
}

// loss[b] = sum_j labels[b, j] * (lse[b] - shifted[b, j]);
// backprop = softmax(logits) - labels, TensorFlow's gradient for labels that
// are probability distributions.
template <typename T>
void DenseXent(const Tensor& features, const Tensor& labels, Tensor& loss, Tensor& backprop) {
  const int64_t batch = features.dim(0), classes = features.dim(1);
  MatrixMap<T> bp = EigenMatrix<T>(backprop, batch, classes);
  const Column<T> lse = ShiftAndLogSumExp<T>(EigenMatrix<T>(features), bp);
  const MatrixMap<T> l = EigenMatrix<T>(labels);
  EigenFlat<T>(loss) = (((-bp.array()).colwise() + lse) * l.array()).rowwise().sum();
  bp.array() = (bp.array().colwise() - lse).unaryExpr(ieee::ExpOp<T>()) - l.array();
}

// The same with a class index per row in place of a distribution; labels
// have been checked to lie in [0, classes).
template <typename T, typename L>
void SparseXent(const Tensor& features, const Tensor& labels, Tensor& loss, Tensor& backprop) {
  const int64_t batch = features.dim(0), classes = features.dim(1);
  MatrixMap<T> bp = EigenMatrix<T>(backprop, batch, classes);
  const Column<T> lse = ShiftAndLogSumExp<T>(EigenMatrix<T>(features), bp);
  const L* label = labels.data<L>();
  T* loss_out = loss.data<T>();
  for (int64_t b = 0; b < batch; ++b) loss_out[b] = lse(b) - bp(b, label[b]);
  bp.array() = (bp.array().colwise() - lse).unaryExpr(ieee::ExpOp<T>());
  for (int64_t b = 0; b < batch; ++b) bp(b, label[b]) -= T(1);
}

// First label outside [0, classes), or -1.
template <typename L>
int64_t FirstBadLabel(const Tensor& labels, int64_t classes) {
  const L* l = labels.data<L>();
  for (int64_t i = 0; i < labels.num_elements(); ++i) {
    if (l[i] < 0 || static_cast<int64_t>(l[i]) >= classes) return i;
  }
  return -1;
}

class SoftmaxXentOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext& ctx) override {
    const Tensor& features = ctx.input(0);
    const Tensor& labels = ctx.input(1);
    TFD_OP_REQUIRES(ctx, features.rank() == 2,
                    errors::InvalidArgument("features (logits) must have rank 2 but have shape ",
                                            features.shape().ToString()));
    TFD_OP_REQUIRES(ctx, labels.shape() == features.shape(),
                    errors::InvalidArgument("labels must have the shape of features ",
                                            features.shape().ToString(), " but have shape ",
                                            labels.shape().ToString()));
    Tensor *loss = nullptr, *backprop = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, TensorShape({features.dim(0)}), &loss));
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(1, features.shape(), &backprop));
    // No classes: every loss is an empty sum, already zero.
    if (features.num_elements() == 0) return;
    TFD_SWITCH_FLOAT(features.dtype(), T, (DenseXent<T>(features, labels, *loss, *backprop)),
                     ctx.SetStatus(UnsupportedDType(features));
                     return;)
  }
};

class SparseSoftmaxXentOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext& ctx) override {
    const Tensor& features = ctx.input(0);
    const Tensor& labels = ctx.input(1);
    TFD_OP_REQUIRES(ctx, features.rank() == 2,
                    errors::InvalidArgument("features (logits) must have rank 2 but have shape ",
                                            features.shape().ToString()));
    TFD_OP_REQUIRES(ctx, labels.rank() == 1 && labels.dim(0) == features.dim(0),
                    errors::InvalidArgument("labels must be a vector of ", features.dim(0),
                                            " class indices (one per row of features ",
                                            features.shape().ToString(), ") but have shape ",
                                            labels.shape().ToString()));
    const int64_t classes = features.dim(1);
    int64_t bad = -1;
    int64_t bad_value = 0;
    if (labels.dtype() == DType::kInt32) {
      bad = FirstBadLabel<int32_t>(labels, classes);
      if (bad >= 0) bad_value = labels.data<int32_t>()[bad];
    } else {
      bad = FirstBadLabel<int64_t>(labels, classes);
      if (bad >= 0) bad_value = labels.data<int64_t>()[bad];
    }
    TFD_OP_REQUIRES(ctx, bad < 0,
                    errors::InvalidArgument("labels[", bad, "] = ", bad_value,
                                            " is not a valid class index: there are ", classes,
                                            " classes, so it must be in [0, ", classes, ")"));
    Tensor *loss = nullptr, *backprop = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, TensorShape({features.dim(0)}), &loss));
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(1, features.shape(), &backprop));
    // Zero rows; zero classes with rows was refused above by the label check.
    if (features.num_elements() == 0) return;
    if (labels.dtype() == DType::kInt32) {
      TFD_SWITCH_FLOAT(features.dtype(), T,
                       (SparseXent<T, int32_t>(features, labels, *loss, *backprop)),
                       ctx.SetStatus(UnsupportedDType(features));
                       return;)
    } else {
      TFD_SWITCH_FLOAT(features.dtype(), T,
                       (SparseXent<T, int64_t>(features, labels, *loss, *backprop)),
                       ctx.SetStatus(UnsupportedDType(features));
                       return;)
    }
  }
};

// features [batch, classes] -> loss [batch], backprop [batch, classes].
Status XentShape(InferenceContext& c, const PartialShape& labels_as_features) {
  TFD_RETURN_IF_ERROR(c.WithRank(0, 2));
  auto merged = c.input(0).Merge(labels_as_features);
  if (!merged.ok()) {
    return errors::InvalidArgument("input 1 (labels) of shape ", c.input(1).ToString(),
                                   " does not match input 0 (features) of shape ",
                                   c.input(0).ToString());
  }
  PartialShape features = merged->rank_known() ? *merged : PartialShape::UnknownOfRank(2);
  c.set_output(0, PartialShape({features.dim(0)}));
  c.set_output(1, features);
  return OkStatus();
}

Status DenseXentShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(c.WithRank(1, 2));
  return XentShape(c, c.input(1));
}

Status SparseXentShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(c.WithRank(1, 1));
  // Labels fix only the batch dimension of features.
  const int64_t batch = c.input(1).rank_known() ? c.input(1).dim(0) : -1;
  return XentShape(c, PartialShape({batch, -1}));
}

}  // namespace

Status RegisterLossOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(
      r.Add<L2LossOp>(OpDefBuilder("L2Loss")
                          .Input("t: T")
                          .Output("output: T")
                          .Attr(kFloatTypeAttr)
                          .Doc("Half the sum of squares of t: sum(t^2) / 2. Shape: [] (a scalar)."),
                      shape_fns::Scalar));
  TFD_RETURN_IF_ERROR(r.Add<SoftmaxXentOp>(
      OpDefBuilder("SoftmaxCrossEntropyWithLogits")
          .Input("features: T")
          .Input("labels: T")
          .Output("loss: T")
          .Output("backprop: T")
          .Attr(kFloatTypeAttr)
          .Doc("Per-row cross-entropy between softmax(features) and the distributions in "
               "labels, and its gradient softmax(features) - labels. Shape: features and labels "
               "[batch, classes] -> loss [batch], backprop [batch, classes]."),
      DenseXentShape));
  TFD_RETURN_IF_ERROR(r.Add<SparseSoftmaxXentOp>(
      OpDefBuilder("SparseSoftmaxCrossEntropyWithLogits")
          .Input("features: T")
          .Input("labels: Tlabels")
          .Output("loss: T")
          .Output("backprop: T")
          .Attr(kFloatTypeAttr)
          .Attr("Tlabels: {int32, int64} = int64")
          .Doc("Per-row cross-entropy between softmax(features) and the class index in labels "
               "(which must lie in [0, classes)), and its gradient. Shape: features [batch, "
               "classes], labels [batch] -> loss [batch], backprop [batch, classes]."),
      SparseXentShape));
  return OkStatus();
}

}  // namespace tfd::kernels::nn
