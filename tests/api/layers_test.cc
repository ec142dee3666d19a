// ops::BatchNormalization: tf.layers.batch_normalization's semantics. In
// training the batch's statistics normalise and the update ops move the
// moving averages by momentum (towards the unbiased variance); inference
// normalises with the moving averages; the gradient reaches x, gamma and
// beta; a last dimension unknown at graph time is refused.
#include <catch2/catch.hpp>
#include <cmath>

#include "api/layers.h"
#include "common/gradients.h"
#include "tests/api/api_test_util.h"

namespace tfd {
namespace {

using testing::ApiEnv;

constexpr int64_t kRows = 6, kChannels = 2;
constexpr double kMomentum = 0.9, kEpsilon = 1e-3;

// Channel 0: 1..6, channel 1: 10, 20, ..., 60.
Tensor Batch() {
  std::vector<double> v;
  for (int64_t r = 0; r < kRows; ++r) {
    v.push_back(static_cast<double>(r + 1));
    v.push_back(10.0 * static_cast<double>(r + 1));
  }
  return Tensor::FromVector<double>(v, TensorShape({kRows, kChannels}));
}

double Mean(int c) { return c == 0 ? 3.5 : 35; }
double BiasedVariance(int c) { return (c == 0 ? 1 : 100) * 17.5 / 6; }

TEST_CASE("BatchNormalization in training: batch statistics, and updates by momentum") {
  ApiEnv env;
  const Scope root = env.Root();
  const Output x = ops::Const(root.WithOpName("x"), Batch());
  const ops::BatchNormLayer bn = ops::BatchNormalization(root.WithOpName("bn"), x, true,
                                                         {.momentum = kMomentum,
                                                          .epsilon = kEpsilon});
  REQUIRE(bn.update_ops.size() == 2);
  ops::GlobalVariablesInitializer(root.WithOpName("init"));
  ops::NoOp(root.WithOpName("update").WithControlDependencies(bn.update_ops));
  CHECK(!bn.moving_mean.trainable());
  CHECK(bn.gamma.trainable());
  auto session = env.Session(root);
  REQUIRE(session->Run({}, {}, {"init"}).ok());
  auto out = session->Run({}, {bn.y.name()}, {"update"});
  REQUIRE(out.ok());
  const Tensor& y = out->fetches[0];
  for (int64_t r = 0; r < kRows; ++r) {
    for (int c = 0; c < kChannels; ++c) {
      const double v = Batch().data<double>()[r * kChannels + c];
      const double expected = (v - Mean(c)) / std::sqrt(BiasedVariance(c) + kEpsilon);
      CHECK(y.data<double>()[r * kChannels + c] == Approx(expected).epsilon(1e-9));
    }
  }
  auto moving = session->Run({}, {bn.moving_mean.name(), bn.moving_variance.name()}, {});
  REQUIRE(moving.ok());
  for (int c = 0; c < kChannels; ++c) {
    INFO("channel " << c);
    // From 0 and 1: 0.9 * start + 0.1 * the batch's (variance unbiased: * 6 / 5).
    CHECK(moving->fetches[0].data<double>()[c] == Approx(0.1 * Mean(c)).epsilon(1e-12));
    CHECK(moving->fetches[1].data<double>()[c] ==
          Approx(0.9 + 0.1 * BiasedVariance(c) * 6 / 5).epsilon(1e-12));
  }
  // The gradient reaches the input and both trainable variables.
  auto g = AddGradients(root, {ops::Sum(root, ops::Mul(root, bn.y, bn.y), {0, 1})},
                        {x, bn.gamma.value(), bn.beta.value()});
  REQUIRE(g.ok());
  for (const Output& o : *g) CHECK(o.valid());
}

TEST_CASE("BatchNormalization for inference: the moving averages, the variables shared") {
  ApiEnv env;
  const Scope root = env.Root();
  const Output x = ops::Const(root.WithOpName("x"), Batch());
  const ops::BatchNormLayer train = ops::BatchNormalization(root.WithOpName("bn"), x, true);
  const ops::BatchNormLayer infer =
      ops::BatchNormalization(root.WithOpName("bn"), x, false, {.epsilon = kEpsilon}, &train);
  CHECK(infer.update_ops.empty());
  CHECK(infer.moving_mean.name() == train.moving_mean.name());
  ops::GlobalVariablesInitializer(root.WithOpName("init"));
  ops::Assign(root.WithOpName("set_mean"), train.moving_mean.ref(),
              ops::Const(root, Tensor::FromVector<double>({1, 2})));
  ops::Assign(root.WithOpName("set_var"), train.moving_variance.ref(),
              ops::Const(root, Tensor::FromVector<double>({4, 9})));
  auto session = env.Session(root);
  REQUIRE(session->Run({}, {}, {"init"}).ok());
  REQUIRE(session->Run({}, {}, {"set_mean", "set_var"}).ok());
  auto out = session->Run({}, {infer.y.name()}, {});
  REQUIRE(out.ok());
  const double mean[] = {1, 2}, var[] = {4, 9};
  for (int64_t r = 0; r < kRows; ++r) {
    for (int c = 0; c < kChannels; ++c) {
      const double v = Batch().data<double>()[r * kChannels + c];
      CHECK(out->fetches[0].data<double>()[r * kChannels + c] ==
            Approx((v - mean[c]) / std::sqrt(var[c] + kEpsilon)).epsilon(1e-9));
    }
  }
}

TEST_CASE("BatchNormalization refuses an input whose channels are unknown") {
  ApiEnv env;
  const Scope root = env.Root();
  const Output x = ops::Placeholder(root.WithOpName("x"), DType::kFloat32);
  ops::BatchNormalization(root.WithOpName("bn"), x, true);
  const Status s = root.status();
  REQUIRE(!s.ok());
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK(s.message().find("'bn'") != std::string::npos);
}

}  // namespace
}  // namespace tfd
