#include "examples/cifar/resnet.h"

#include <cmath>
#include <string>

#include "api/ops.h"

namespace tfd::examples {
namespace {

using ops::Initializer;
using ops::Variable;

// Walks the network once, making each variable on the first build and
// taking the next one from the params on later builds.
class Builder {
 public:
  Builder(const ResnetConfig& config, bool training, ResnetParams* params)
      : config_(config), training_(training), params_(*params), making_(params->convs.empty()) {}

  bool making() const { return making_; }

  // Conv k x k with `out` channels and `stride`, SAME padding, no bias.
  Output Conv(const Scope& s, const Output& x, int64_t k, int64_t in, int64_t out,
              int64_t stride) {
    if (making_) {
      const double stddev = std::sqrt(2.0 / static_cast<double>(k * k * in));
      const auto seed = config_.seed + static_cast<int64_t>(params_.convs.size());
      params_.convs.push_back(Variable(s.WithOpName("w"), TensorShape({k, k, in, out}),
                                       DType::kFloat32,
                                       Initializer::TruncatedNormal(stddev, seed)));
    }
    return ops::Conv2D(s, x, params_.convs.at(conv_++), {1, stride, stride, 1}, "SAME");
  }

  Output Norm(const Scope& s, const Output& x) {
    const ops::BatchNormOptions options{.momentum = config_.bn_momentum};
    if (making_) {
      ops::BatchNormLayer bn = ops::BatchNormalization(s.WithOpName("bn"), x, training_, options);
      params_.update_ops.insert(params_.update_ops.end(), bn.update_ops.begin(),
                                bn.update_ops.end());
      params_.norms.push_back(bn);
      ++norm_;
      return bn.y;
    }
    const ops::BatchNormLayer& shared = params_.norms.at(norm_++);
    return ops::BatchNormalization(s.WithOpName("bn"), x, training_, options, &shared).y;
  }

  // One residual block from `in` to `out` channels.
  Output Block(const Scope& s, const Output& x, int64_t in, int64_t out, int64_t stride) {
    const Scope a = s.WithName("a"), b = s.WithName("b");
    Output y = ops::Relu(a, Norm(a, Conv(a, x, 3, in, out, stride)));
    y = Norm(b, Conv(b, y, 3, out, out, 1));
    Output shortcut = x;
    if (stride != 1 || in != out) {
      const Scope p = s.WithName("projection");
      shortcut = Norm(p, Conv(p, x, 1, in, out, stride));
    }
    return ops::Relu(s, ops::Add(s, y, shortcut));
  }

 private:
  const ResnetConfig& config_;
  const bool training_;
  ResnetParams& params_;
  const bool making_;
  size_t conv_ = 0, norm_ = 0;
};

}  // namespace

Output ResnetLogits(const Scope& scope, const ResnetConfig& config, const Output& images,
                    bool training, ResnetParams* params) {
  Builder b(config, training, params);
  if (b.making() && !training) {
    scope.UpdateStatus(errors::InvalidArgument(
        "ResnetLogits: the first build makes the variables and must be a training one"));
    return Output();
  }
  const Scope stem = scope.WithName("stem");
  Output x = ops::Relu(stem, b.Norm(stem, b.Conv(stem, images, 3, 3, 16, 1)));
  int64_t channels = 16;
  for (int stage = 0; stage < 3; ++stage) {
    const int64_t out = int64_t{16} << stage;
    for (int k = 0; k < config.blocks; ++k) {
      const std::string name =
          "stage" + std::to_string(stage + 1) + "/block" + std::to_string(k + 1);
      x = b.Block(scope.WithName(name), x, channels, out, stage > 0 && k == 0 ? 2 : 1);
      channels = out;
    }
  }
  const Scope fc = scope.WithName("fc");
  const Output pooled = ops::Mean(fc, x, {int64_t{1}, int64_t{2}});
  if (b.making()) {
    const double stddev = std::sqrt(1.0 / static_cast<double>(channels));
    params->fc_w =
        Variable(fc.WithOpName("w"), TensorShape({channels, config.classes}), DType::kFloat32,
                 Initializer::TruncatedNormal(stddev, config.seed + 100));
    params->fc_b = Variable(fc.WithOpName("b"), TensorShape({config.classes}), DType::kFloat32,
                            Initializer::Zeros());
  }
  return ops::BiasAdd(fc, ops::MatMul(fc, pooled, params->fc_w), params->fc_b);
}

}  // namespace tfd::examples
