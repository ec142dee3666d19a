// Auc: the exact area under the ROC curve of `predictions` scoring binary
// `labels`, as sklearn.metrics.roc_auc_score computes it: the rank-sum
// (Mann-Whitney) formula with tied scores given their average rank. A model's
// evaluation fetches it over a whole held-out set in one batch, so the op
// sorts once and needs no state (unlike tf.metrics.auc's bucketed estimate).
//
// Labels must be 0 or 1 and both classes present (the AUC is undefined
// otherwise; sklearn refuses too); a NaN score is refused, infinities rank
// as the extremes they are.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "common/op_kernel.h"
#include "kernels/math/math_ops_internal.h"

namespace tfd::kernels {
namespace {

// Sum of the (1-based, ties averaged) ranks of the positives, and the
// class counts; INVALID_ARGUMENT naming `node` for a bad label or score.
template <typename T>
StatusOr<double> Auc(const float* labels, const T* scores, int64_t n, const std::string& node) {
  int64_t positives = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (labels[i] != 0.0f && labels[i] != 1.0f) {
      return errors::InvalidArgument("Auc '", node, "': labels must be 0 or 1, but label ", i,
                                     " is ", labels[i]);
    }
    if (std::isnan(scores[i])) {
      return errors::InvalidArgument("Auc '", node, "': prediction ", i, " is NaN");
    }
    positives += labels[i] == 1.0f ? 1 : 0;
  }
  const int64_t negatives = n - positives;
  if (positives == 0 || negatives == 0) {
    return errors::InvalidArgument("Auc '", node, "': the AUC needs both classes, but all ", n,
                                   " labels are ", positives == 0 ? "0" : "1");
  }
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [scores](int64_t a, int64_t b) { return scores[a] < scores[b]; });
  double rank_sum = 0;
  for (int64_t start = 0; start < n;) {
    int64_t end = start;  // [start, end) share one score
    int64_t tied_positives = 0;
    while (end < n && scores[order[end]] == scores[order[start]]) {
      tied_positives += labels[order[end]] == 1.0f ? 1 : 0;
      ++end;
    }
    const double average_rank = (static_cast<double>(start + 1) + static_cast<double>(end)) / 2;
    rank_sum += average_rank * static_cast<double>(tied_positives);
    start = end;
  }
  const auto p = static_cast<double>(positives), q = static_cast<double>(negatives);
  return (rank_sum - p * (p + 1) / 2) / (p * q);
}

class AucOp : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void Compute(OpKernelContext& ctx) override {
    const Tensor& labels = ctx.input(0);
    const Tensor& scores = ctx.input(1);
    TFD_OP_REQUIRES(ctx, labels.shape() == scores.shape(),
                    errors::InvalidArgument("Auc '", name(), "': labels ",
                                            labels.shape().ToString(), " and predictions ",
                                            scores.shape().ToString(),
                                            " must have the same shape"));
    const int64_t n = labels.num_elements();
    StatusOr<double> auc = scores.dtype() == DType::kFloat64
                               ? Auc(labels.data<float>(), scores.data<double>(), n, name())
                               : Auc(labels.data<float>(), scores.data<float>(), n, name());
    TFD_OP_REQUIRES_OK(ctx, auc.status());
    ctx.set_output(0, Tensor::Scalar<double>(*auc));
  }
};

Status AucShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(c.input(0).Merge(c.input(1)).status().WithContext(
      "Auc: labels and predictions must have the same shape"));
  c.set_output(0, PartialShape({}));
  return OkStatus();
}

}  // namespace

Status RegisterAucOp(OpRegistry& r) {
  return r.Add<AucOp>(
      OpDefBuilder("Auc")
          .Input("labels: float32")
          .Input("predictions: T")
          .Output("auc: float64")
          .Attr("T: {float32, float64} = float32")
          .Doc("The exact area under the ROC curve of predictions (any scores: logits or "
               "probabilities) for binary labels, as sklearn's roc_auc_score: the rank-sum "
               "formula with tied scores given their average rank. Labels must be 0 or 1 with "
               "both present, and no prediction NaN (INVALID_ARGUMENT otherwise). Meant for a "
               "whole held-out set in one batch (eval/auc); not differentiable. Shape: labels "
               "and predictions alike, auc []."),
      AucShape);
}

}  // namespace tfd::kernels
