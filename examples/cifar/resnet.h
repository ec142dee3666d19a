// A small ResNet for 32x32 images, in the style of He et al.'s CIFAR-10
// networks (ResNet-6n+2):
//
//   images [b, 32, 32, 3]
//   conv 3x3x16, batch norm, ReLU                              -> [b, 32, 32, 16]
//   n residual blocks of 16 channels                           -> [b, 32, 32, 16]
//   n blocks of 32, the first with stride 2                    -> [b, 16, 16, 32]
//   n blocks of 64, the first with stride 2                    -> [b, 8, 8, 64]
//   global average pool, fully connected 64 -> classes + bias: the logits
//
// A block is conv 3x3, batch norm, ReLU, conv 3x3, batch norm, plus the
// shortcut, then ReLU; where the shape changes the shortcut is a 1x1
// convolution with stride 2 (a projection). Convolutions have no bias (batch
// norm's beta takes its place) and He-scaled truncated-normal weights.
//
//   ResnetParams p;
//   Output logits = ResnetLogits(scope, {.blocks = 1}, images, /*training=*/true, &p);
//   // p.update_ops: the moving averages' updates, to run with each step.
//   Output eval = ResnetLogits(scope, {.blocks = 1}, test_images, false, &p);  // shares p
//
// Thread-safety: graph building; use a scope from one thread at a time.
#pragma once

#include <vector>

#include "api/layers.h"
#include "api/variables.h"

namespace tfd::examples {

struct ResnetConfig {
  int blocks = 1;  // residual blocks per stage: 6 * blocks + 2 layers (1: ResNet-8)
  int64_t classes = 10;
  int64_t seed = 1;  // weight k is drawn with seed + k
  // Batch norm's moving averages: moving = momentum * moving + (1 - momentum) * batch.
  double bn_momentum = 0.9;
};

// The network's variables, made by its first (training) build and shared by
// later ones, in the order the build meets them.
struct ResnetParams {
  std::vector<ops::Variable> convs;
  std::vector<ops::BatchNormLayer> norms;
  ops::Variable fc_w, fc_b;
  // The training build's moving-average updates.
  std::vector<Operation> update_ops;
};

// The logits [b, classes] of `images` (float32 [b, 32, 32, 3]). The first
// build makes the variables into *params and must be a training one; a later
// build reuses them, and with training false normalizes with the moving
// averages. Errors go to the scope.
Output ResnetLogits(const Scope& scope, const ResnetConfig& config, const Output& images,
                    bool training, ResnetParams* params);

}  // namespace tfd::examples
