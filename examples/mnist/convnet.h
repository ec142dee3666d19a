// The "deep" MNIST model: the convnet of TensorFlow's "Deep MNIST for
// Experts" tutorial, layer for layer.
//
//   images [b, 784] -> [b, 28, 28, 1]
//   conv 5x5x32 SAME + bias, ReLU, max pool 2x2 stride 2   -> [b, 14, 14, 32]
//   conv 5x5x64 SAME + bias, ReLU, max pool 2x2 stride 2   -> [b, 7, 7, 64]
//   fully connected 3136 -> 1024 + bias, ReLU
//   dropout keeping half (training only)
//   fully connected 1024 -> 10 + bias: the logits
//
// Weights are drawn from a normal distribution truncated at two standard
// deviations (stddev 0.1), biases start at 0.1: 3,274,634 parameters in all.
//
//   ConvnetParams p = MakeConvnetParams(scope, /*seed=*/1);
//   Output logits = ConvnetLogits(scope, p, images, /*dropout_seed=*/7);
//   Output eval = ConvnetLogits(scope, p, test_images, /*dropout_seed=*/std::nullopt);
//
// Thread-safety: graph building; use a scope from one thread at a time.
#pragma once

#include <optional>

#include "api/variables.h"

namespace tfd::examples {

struct ConvnetParams {
  ops::Variable conv1_w, conv1_b, conv2_w, conv2_b, fc1_w, fc1_b, fc2_w, fc2_b;
};

// The eight variables, named conv1/w, conv1/b, ... fc2/b under `scope`;
// weight k (1-based, in the order above) is drawn with seed `seed + k - 1`.
ConvnetParams MakeConvnetParams(const Scope& scope, int64_t seed);

// The logits [b, 10] of `images` (float32 [b, 784] in [0, 1]). With a
// dropout seed, the fully connected layer's output goes through dropout at
// rate 0.5 (a training graph); without one it does not (an evaluation
// graph).
Output ConvnetLogits(const Scope& scope, const ConvnetParams& p, const Output& images,
                     std::optional<int64_t> dropout_seed);

}  // namespace tfd::examples
