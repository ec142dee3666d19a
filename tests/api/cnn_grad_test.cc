// The convnet ops' gradients, through the graph API's AddGradients, against
// central finite differences in float64: every input of each op, at shapes
// known, partly known and of unknown rank.
#include <catch2/catch.hpp>

#include "common/gradients.h"
#include "tests/api/api_test_util.h"

namespace tfd {
namespace {

using testing::CheckGradientsAllModes;
using testing::RandomTensor;
using Xs = std::vector<Output>;

std::vector<int64_t> Spatial(int64_t rows, int64_t cols) { return {1, rows, cols, 1}; }

TEST_CASE("Conv2D's gradients reach its input and filter") {
  struct Case {
    const char* what;
    std::vector<int64_t> strides, dilations;
    const char* padding;
  };
  const Case cases[] = {
      {"SAME, strides 2x1", Spatial(2, 1), Spatial(1, 1), "SAME"},
      {"VALID, dilations 1x2", Spatial(1, 1), Spatial(1, 2), "VALID"},
      {"SAME, odd padding, strides 1x2", Spatial(1, 2), Spatial(1, 1), "SAME"},
  };
  for (const Case& c : cases) {
    ops::Conv2DAttrs attrs;
    attrs.dilations = c.dilations;
    CheckGradientsAllModes(std::string("Conv2D ") + c.what, [&](const Scope& s, const Xs& in) {
      return ops::Conv2D(s, in[0], in[1], c.strides, c.padding, attrs);
    }, {RandomTensor({2, 5, 6, 3}, 41), RandomTensor({2, 3, 3, 2}, 42)});
  }
}

TEST_CASE("Conv2D's gradient ops can be differentiated again") {
  const std::vector<int64_t> strides = Spatial(2, 1);
  const Tensor sizes = Tensor::FromVector<int32_t>({2, 5, 4, 3});
  CheckGradientsAllModes("Conv2DBackpropInput", [&](const Scope& s, const Xs& in) {
    return ops::Conv2DBackpropInput(s, ops::Const(s, sizes), in[0], in[1], strides, "SAME");
  }, {RandomTensor({3, 2, 3, 2}, 43), RandomTensor({2, 3, 4, 2}, 44)});
  const Tensor filter_sizes = Tensor::FromVector<int32_t>({3, 2, 3, 2});
  CheckGradientsAllModes("Conv2DBackpropFilter", [&](const Scope& s, const Xs& in) {
    return ops::Conv2DBackpropFilter(s, in[0], ops::Const(s, filter_sizes), in[1], strides,
                                     "SAME");
  }, {RandomTensor({2, 5, 4, 3}, 45), RandomTensor({2, 3, 4, 2}, 46)});
}

TEST_CASE("MaxPool's and AvgPool's gradients reach their input") {
  // Distinct values, no two within the finite-difference step of each
  // other, so that no window's maximum changes under the perturbation.
  Tensor x = RandomTensor({2, 5, 4, 3}, 47);
  for (int64_t i = 0; i < x.num_elements(); ++i) x.data<double>()[i] = (i * 37 % 120) / 10.0 - 6;
  const std::vector<int64_t> ksize = Spatial(3, 2), strides = Spatial(2, 1);
  for (const char* padding : {"SAME", "VALID"}) {
    CheckGradientsAllModes(std::string("MaxPool ") + padding, [&](const Scope& s, const Xs& in) {
      return ops::MaxPool(s, in[0], ksize, strides, padding);
    }, {x});
    CheckGradientsAllModes(std::string("AvgPool ") + padding, [&](const Scope& s, const Xs& in) {
      return ops::AvgPool(s, in[0], ksize, strides, padding);
    }, {x});
  }
}

TEST_CASE("FusedBatchNorm's gradients reach x, scale and offset in training and inference") {
  const Tensor mean = Tensor::FromVector<double>({0.1, -0.2, 0.3});
  const Tensor variance = Tensor::FromVector<double>({0.5, 1.5, 2});
  for (bool training : {true, false}) {
    ops::FusedBatchNormAttrs attrs;
    attrs.is_training = training;
    attrs.epsilon = 1e-3;
    CheckGradientsAllModes(training ? "FusedBatchNorm training" : "FusedBatchNorm inference",
                           [&](const Scope& s, const Xs& in) {
      return ops::FusedBatchNorm(s, in[0], in[1], in[2], ops::Const(s, mean),
                                 ops::Const(s, variance), attrs).y;
    }, {RandomTensor({2, 3, 2, 3}, 48, -2, 2), RandomTensor({3}, 49, 0.5, 2),
        RandomTensor({3}, 50)});
  }
}

TEST_CASE("DepthwiseConv2dNative's gradients reach its input and filter") {
  ops::Conv2DAttrs attrs;
  attrs.dilations = Spatial(1, 2);
  CheckGradientsAllModes("DepthwiseConv2dNative", [&](const Scope& s, const Xs& in) {
    return ops::DepthwiseConv2dNative(s, in[0], in[1], Spatial(2, 1), "SAME", attrs);
  }, {RandomTensor({2, 5, 4, 3}, 51), RandomTensor({3, 2, 3, 2}, 52)});
}

TEST_CASE("LRN's gradient reaches its input") {
  ops::LRNAttrs attrs;
  attrs.depth_radius = 2;
  attrs.bias = 1.5;
  attrs.alpha = 0.3;
  attrs.beta = 0.75;
  CheckGradientsAllModes("LRN", [&](const Scope& s, const Xs& in) {
    return ops::LRN(s, in[0], attrs);
  }, {RandomTensor({2, 2, 1, 7}, 53, -2, 2)});
}

}  // namespace
}  // namespace tfd
