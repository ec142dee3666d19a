// Every nn op's gradient against central finite differences in float64.
#include <catch2/catch.hpp>

#include "common/gradients.h"
#include "tests/api/api_test_util.h"

namespace tfd {
namespace {

using testing::CheckGradientsAllModes;
using testing::RandomTensor;
using Xs = std::vector<Output>;

TEST_CASE("gradients of activations match finite differences") {
  struct Case {
    const char* name;
    Output (*fn)(const Scope&, const ops::Input&);
  };
  const Case cases[] = {
      {"Sigmoid", ops::Sigmoid}, {"Tanh", ops::Tanh},         {"Relu", ops::Relu},
      {"Elu", ops::Elu},         {"Softplus", ops::Softplus}, {"Softmax", ops::Softmax},
      {"LogSoftmax", ops::LogSoftmax}, {"L2Loss", ops::L2Loss},
  };
  // Relu6 has kinks at 0 and 6: values spread over (-2, 8) avoid both.
  const Tensor wide = Tensor::FromVector<double>({-1.5, 0.5, 2.5, 5.5, 7.5, 3.3},
                                                 TensorShape{2, 3});
  for (const Case& c : cases) {
    CheckGradientsAllModes(c.name, [&](const Scope& s, const Xs& in) { return c.fn(s, in[0]); },
                           {RandomTensor({2, 3}, 21, -2, 2)});
  }
  CheckGradientsAllModes("Relu6", [](const Scope& s, const Xs& in) {
    return ops::Relu6(s, in[0]);
  }, {wide});
}

TEST_CASE("BiasAdd gradients reach the value and the bias") {
  CheckGradientsAllModes("BiasAdd", [](const Scope& s, const Xs& in) {
    return ops::BiasAdd(s, in[0], in[1]);
  }, {RandomTensor({4, 3}, 22), RandomTensor({3}, 23)});
}

TEST_CASE("softmax cross-entropy gradients for logits and dense labels") {
  // The op's backprop is the logits' gradient for label rows that are
  // distributions (sum to 1), as in TensorFlow.
  Tensor labels = RandomTensor({3, 4}, 25, 0.1, 1);
  for (int r = 0; r < 3; ++r) {
    double* row = labels.data<double>() + 4 * r;
    const double sum = row[0] + row[1] + row[2] + row[3];
    for (int c = 0; c < 4; ++c) row[c] /= sum;
  }
  CheckGradientsAllModes("SoftmaxCrossEntropyWithLogits", [](const Scope& s, const Xs& in) {
    return ops::SoftmaxCrossEntropyWithLogits(s, in[0], in[1]).loss;
  }, {RandomTensor({3, 4}, 24, -2, 2), labels});
}

TEST_CASE("sparse softmax cross-entropy gradient for logits") {
  const Tensor labels = Tensor::FromVector<int64_t>({2, 0, 3});
  CheckGradientsAllModes("SparseSoftmaxCrossEntropyWithLogits", [&](const Scope& s, const Xs& in) {
    return ops::SparseSoftmaxCrossEntropyWithLogits(s, in[0], ops::Const(s, labels)).loss;
  }, {RandomTensor({3, 4}, 26, -2, 2)});
}

TEST_CASE("a small network's gradients match finite differences end to end") {
  // mean(xent(relu(x w1 + b1) w2 + b2, labels)) with everything fed.
  const Tensor labels = Tensor::FromVector<int32_t>({1, 0});
  CheckGradientsAllModes("two-layer network", [&](const Scope& s, const Xs& in) {
    const Output h = ops::Relu(s, ops::BiasAdd(s, ops::MatMul(s, in[0], in[1]), in[2]));
    const Output logits = ops::Add(s, ops::MatMul(s, h, in[3]), in[4]);
    return ops::Mean(s, ops::SparseSoftmaxCrossEntropyWithLogits(s, logits, labels).loss, 0);
  }, {RandomTensor({2, 3}, 27), RandomTensor({3, 4}, 28), RandomTensor({4}, 29, 0.1, 0.5),
      RandomTensor({4, 2}, 30), RandomTensor({2}, 31)});
}

TEST_CASE("differentiating the backprop output of a cross-entropy op is refused") {
  testing::ApiEnv env;
  const Scope root = env.Root();
  const Output x = ops::Placeholder(root, DType::kFloat64, {2, 3});
  const auto xent = ops::SoftmaxCrossEntropyWithLogits(root, x, ops::OnesLike(root, x));
  auto g = AddGradients(root, {ops::Sum(root, xent.backprop, {0, 1})}, {x});
  REQUIRE(!g.ok());
  CHECK(g.status().code() == Code::kInvalidArgument);
  CHECK(g.status().message().find("backprop") != std::string::npos);
}

}  // namespace
}  // namespace tfd
