#include "examples/mnist/convnet.h"

#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace tfd::examples {
namespace {

using ops::Initializer;
using ops::Variable;

constexpr double kWeightStddev = 0.1;
constexpr double kBiasInit = 0.1;
constexpr double kDropoutRate = 0.5;
constexpr int64_t kFlat = 7 * 7 * 64;

// `layer`/w of `shape` (truncated normal) and `layer`/b of its last
// dimension (0.1 everywhere).
std::pair<Variable, Variable> Layer(const Scope& scope, const std::string& layer,
                                    std::vector<int64_t> shape, int64_t seed) {
  const Scope s = scope.WithName(layer);
  const DType f32 = DType::kFloat32;
  Variable w(s.WithOpName("w"), TensorShape(shape), f32,
             Initializer::TruncatedNormal(kWeightStddev, seed));
  Variable b(s.WithOpName("b"), TensorShape({shape.back()}), f32, Initializer::Constant(kBiasInit));
  return {w, b};
}

// Conv 5x5 SAME stride 1, bias, ReLU, max pool 2x2 stride 2.
Output ConvPool(const Scope& s, const Output& x, const Variable& w, const Variable& b) {
  const Output conv = ops::Conv2D(s, x, w, {1, 1, 1, 1}, "SAME");
  const Output relu = ops::Relu(s, ops::BiasAdd(s, conv, b));
  return ops::MaxPool(s, relu, {1, 2, 2, 1}, {1, 2, 2, 1}, "SAME");
}

}  // namespace

ConvnetParams MakeConvnetParams(const Scope& scope, int64_t seed) {
  ConvnetParams p;
  std::tie(p.conv1_w, p.conv1_b) = Layer(scope, "conv1", {5, 5, 1, 32}, seed);
  std::tie(p.conv2_w, p.conv2_b) = Layer(scope, "conv2", {5, 5, 32, 64}, seed + 1);
  std::tie(p.fc1_w, p.fc1_b) = Layer(scope, "fc1", {kFlat, 1024}, seed + 2);
  std::tie(p.fc2_w, p.fc2_b) = Layer(scope, "fc2", {1024, 10}, seed + 3);
  return p;
}

Output ConvnetLogits(const Scope& s, const ConvnetParams& p, const Output& images,
                     std::optional<int64_t> dropout_seed) {
  const Output x = ops::Reshape(s, images, {int64_t{-1}, int64_t{28}, int64_t{28}, int64_t{1}});
  const Output pool1 = ConvPool(s.WithName("conv1"), x, p.conv1_w, p.conv1_b);
  const Output pool2 = ConvPool(s.WithName("conv2"), pool1, p.conv2_w, p.conv2_b);
  const Scope fc1 = s.WithName("fc1");
  const Output flat = ops::Reshape(fc1, pool2, {int64_t{-1}, kFlat});
  Output hidden = ops::Relu(fc1, ops::BiasAdd(fc1, ops::MatMul(fc1, flat, p.fc1_w), p.fc1_b));
  if (dropout_seed) hidden = ops::Dropout(s.WithName("dropout"), hidden, kDropoutRate, *dropout_seed);
  const Scope fc2 = s.WithName("fc2");
  return ops::BiasAdd(fc2, ops::MatMul(fc2, hidden, p.fc2_w), p.fc2_b);
}

}  // namespace tfd::examples
