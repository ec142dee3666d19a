// InTopK and InTopKV2: whether each row's target class is among its k
// highest predictions (k an attr in the first, an input in the second).
#include <cmath>

#include "common/op_kernel.h"
#include "kernels/nn/nn_internal.h"

namespace tfd::kernels::nn {
namespace {

// As TensorFlow: ties with the target's score count in its favour (only
// strictly larger scores push it out), and a row with a non-finite score or
// an out-of-range target is false rather than an error.
template <typename L>
void InTopK(const Tensor& predictions, const Tensor& targets, int64_t k, Tensor& out) {
  const int64_t batch = predictions.dim(0), classes = predictions.dim(1);
  const float* p = predictions.data<float>();
  const L* t = targets.data<L>();
  bool* o = out.data<bool>();
  for (int64_t b = 0; b < batch; ++b) {
    const float* row = p + b * classes;
    const int64_t target = static_cast<int64_t>(t[b]);
    bool in_top = target >= 0 && target < classes && std::isfinite(row[target]);
    int64_t larger = 0;
    for (int64_t c = 0; in_top && c < classes; ++c) {
      if (!std::isfinite(row[c])) {
        in_top = false;
      } else if (row[c] > row[target]) {
        ++larger;
      }
    }
    o[b] = in_top && larger < k;
  }
}

class InTopKOp : public OpKernel {
 public:
  explicit InTopKOp(OpKernelConstruction& c) : OpKernel(c), k_from_input_(c.num_inputs() == 3) {
    if (!k_from_input_) c.SetStatus(c.GetAttr("k", &k_));
  }

  void Compute(OpKernelContext& ctx) override {
    const Tensor& predictions = ctx.input(0);
    const Tensor& targets = ctx.input(1);
    TFD_OP_REQUIRES(ctx, predictions.rank() == 2,
                    errors::InvalidArgument("predictions must have rank 2 but have shape ",
                                            predictions.shape().ToString()));
    TFD_OP_REQUIRES(
        ctx, targets.rank() == 1 && targets.dim(0) == predictions.dim(0),
        errors::InvalidArgument("targets must be a vector of ", predictions.dim(0),
                                " class indices but have shape ", targets.shape().ToString()));
    int64_t k = k_;
    if (k_from_input_) {
      const Tensor& k_tensor = ctx.input(2);
      TFD_OP_REQUIRES(ctx, k_tensor.rank() == 0,
                      errors::InvalidArgument("k must be a scalar but has shape ",
                                              k_tensor.shape().ToString()));
      k = k_tensor.dtype() == DType::kInt32 ? k_tensor.scalar<int32_t>()
                                            : k_tensor.scalar<int64_t>();
    }
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, TensorShape({targets.dim(0)}), &out));
    if (targets.dtype() == DType::kInt32) {
      InTopK<int32_t>(predictions, targets, k, *out);
    } else {
      InTopK<int64_t>(predictions, targets, k, *out);
    }
  }

 private:
  bool k_from_input_;
  int64_t k_ = 0;
};

Status InTopKShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(c.WithRank(0, 2));
  TFD_RETURN_IF_ERROR(c.WithRank(1, 1));
  if (c.num_inputs() == 3) TFD_RETURN_IF_ERROR(c.WithRank(2, 0));
  const int64_t from_predictions = c.input(0).rank_known() ? c.input(0).dim(0) : -1;
  const int64_t from_targets = c.input(1).rank_known() ? c.input(1).dim(0) : -1;
  if (from_predictions >= 0 && from_targets >= 0 && from_predictions != from_targets) {
    return errors::InvalidArgument("input 1 (targets) has ", from_targets,
                                   " elements but input 0 (predictions) has ", from_predictions,
                                   " rows");
  }
  c.set_output(0, PartialShape({from_predictions >= 0 ? from_predictions : from_targets}));
  return OkStatus();
}

}  // namespace

Status RegisterInTopKOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<InTopKOp>(
      OpDefBuilder("InTopK")
          .Input("predictions: float32")
          .Input("targets: T")
          .Output("precision: bool")
          .Attr("k: int")
          .Attr("T: {int32, int64} = int32")
          .Doc("For each row, whether predictions[row, targets[row]] is among the row's k "
               "largest (ties count as in; non-finite scores or an out-of-range target give "
               "false). Shape: predictions [batch, classes], targets [batch] -> [batch]."),
      InTopKShape));
  TFD_RETURN_IF_ERROR(r.Add<InTopKOp>(
      OpDefBuilder("InTopKV2")
          .Input("predictions: float32")
          .Input("targets: T")
          .Input("k: T")
          .Output("precision: bool")
          .Attr("T: {int32, int64} = int32")
          .Doc("InTopK with k given as a scalar input. Shape: predictions [batch, classes], "
               "targets [batch], k [] -> [batch]."),
      InTopKShape));
  return OkStatus();
}

}  // namespace tfd::kernels::nn
