// Layers built from several ops and their own variables, as tf.layers
// builds them. Today: batch normalization.
//
//   BatchNormLayer bn = BatchNormalization(root.WithOpName("bn1"), conv, /*training=*/true);
//   Output y = ops::Relu(root, bn.y);
//   // Run bn.update_ops with every training step (TF's UPDATE_OPS), e.g. as
//   // control dependencies of the train op:
//   optimizer.Minimize(root.WithControlDependencies(bn.update_ops), loss);
//   // An evaluation graph shares the variables and reads the moving averages:
//   BatchNormLayer eval = BatchNormalization(root.WithOpName("bn1"), test_conv, false, {}, &bn);
//
// Thread-safety: as Scope (one thread per graph).
#pragma once

#include <vector>

#include "api/variables.h"

namespace tfd::ops {

struct BatchNormOptions {
  // moving = momentum * moving + (1 - momentum) * the batch's statistic, at
  // each run of the update ops (tf.layers.batch_normalization's defaults).
  double momentum = 0.99;
  double epsilon = 1e-3;
};

// The layer's variables, named "<name>/gamma", "<name>/beta" (trainable:
// ones and zeros), "<name>/moving_mean" and "<name>/moving_variance" (not
// trainable: zeros and ones), and what it computes.
struct BatchNormLayer {
  Variable gamma, beta, moving_mean, moving_variance;
  Output y;
  // Training only: the two assignments of the moving averages (empty for
  // an inference layer). Nothing runs them unless the caller does.
  std::vector<Operation> update_ops;
};

// Batch normalization over the last dimension of x (NHWC images, or
// [batch, features] rows: rank 4 or 2) with FusedBatchNorm, named scope.op_name() or
// "batch_normalization". Training: y normalises with the batch's mean and
// (biased) variance, and update_ops move the averages towards the batch's
// mean and unbiased variance. Inference: y normalises with the moving
// averages. `shared` reuses another layer's variables (a second graph over
// the same parameters, e.g. an evaluation beside training); otherwise they
// are created, shaped by x's last dimension, which must be known
// (INVALID_ARGUMENT naming the layer otherwise). Errors go to the scope.
BatchNormLayer BatchNormalization(const Scope& scope, const Output& x, bool training,
                                  const BatchNormOptions& options = {},
                                  const BatchNormLayer* shared = nullptr);

}  // namespace tfd::ops
