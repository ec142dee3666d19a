#include "api/layers.h"

#include <string>

namespace tfd::ops {
namespace {

// The four variables, shaped [channels] by x's last dimension.
Status MakeVariables(const Scope& s, const Output& x, BatchNormLayer& layer) {
  const TensorShape channels({x.shape.dim(x.shape.rank() - 1)});
  const DType dtype = x.dtype;
  layer.gamma = Variable(s.WithOpName("gamma"), channels, dtype, Initializer::Ones());
  layer.beta = Variable(s.WithOpName("beta"), channels, dtype, Initializer::Zeros());
  layer.moving_mean = Variable(s.WithOpName("moving_mean"), channels, dtype, Initializer::Zeros(),
                               {.trainable = false});
  layer.moving_variance = Variable(s.WithOpName("moving_variance"), channels, dtype,
                                   Initializer::Ones(), {.trainable = false});
  return OkStatus();
}

}  // namespace

BatchNormLayer BatchNormalization(const Scope& scope, const Output& x, bool training,
                                  const BatchNormOptions& options,
                                  const BatchNormLayer* shared) {
  const std::string name = scope.op_name().empty() ? "batch_normalization" : scope.op_name();
  const Scope s = scope.WithOpName("").WithName(name);
  BatchNormLayer layer;
  const PartialShape& shape = x.shape;
  if (!shape.rank_known() || (shape.rank() != 2 && shape.rank() != 4) ||
      shape.dim(shape.rank() - 1) < 0) {
    s.UpdateStatus(errors::InvalidArgument(
        "batch normalization '", name,
        "' needs an input of rank 2 or 4 with a known last dimension, got ", shape.ToString(),
        " from ", x.name()));
    return layer;
  }
  if (shared != nullptr) {
    layer.gamma = shared->gamma;
    layer.beta = shared->beta;
    layer.moving_mean = shared->moving_mean;
    layer.moving_variance = shared->moving_variance;
  } else {
    s.UpdateStatus(MakeVariables(s, x, layer));
  }
  if (!(options.momentum >= 0 && options.momentum < 1)) {
    s.UpdateStatus(errors::InvalidArgument("batch normalization '", name,
                                           "': momentum must be in [0, 1), got ",
                                           options.momentum));
    return layer;
  }
  // In training FusedBatchNorm blends the given averages with the batch's
  // statistics by exponential_avg_factor: what the moving averages become.
  // FusedBatchNorm takes images: rows become [rows, 1, 1, channels].
  const int64_t channels = shape.dim(shape.rank() - 1);
  const bool rows = shape.rank() == 2;
  const Output images = rows ? Reshape(s, x, {int64_t{-1}, int64_t{1}, int64_t{1}, channels}) : x;
  const FusedBatchNormOutputs out = FusedBatchNorm(
      s, images, layer.gamma, layer.beta, layer.moving_mean, layer.moving_variance,
      {.epsilon = options.epsilon,
       .exponential_avg_factor = 1 - options.momentum,
       .is_training = training});
  layer.y = rows ? Reshape(s, out.y, {int64_t{-1}, channels}) : out.y;
  if (training) {
    layer.update_ops.push_back(AsOperation(
        Assign(s.WithOpName("update_moving_mean"), layer.moving_mean.ref(), out.batch_mean)));
    layer.update_ops.push_back(AsOperation(Assign(s.WithOpName("update_moving_variance"),
                                                  layer.moving_variance.ref(),
                                                  out.batch_variance)));
  }
  return layer;
}

}  // namespace tfd::ops
