// Gradients of the element-wise ops of issue 37 (the trigonometric and
// hyperbolic family, Erf, LeakyRelu, Selu and their derivative ops, FloorMod)
// against central finite differences in float64; the piecewise-constant ops
// (Ceil, Round, FloorDiv) pass no gradient, and Mod has none, as in
// TensorFlow.
#include <catch2/catch.hpp>

#include "common/gradients.h"
#include "tests/api/api_test_util.h"

namespace tfd {
namespace {

using testing::CheckGradientsAllModes;
using testing::RandomTensor;
using Xs = std::vector<Output>;

TEST_CASE("gradients of the trigonometric, hyperbolic and error functions") {
  struct Case {
    const char* name;
    Output (*fn)(const Scope&, const ops::Input&);
    double lo, hi;  // inside the domain, away from poles
  };
  const Case cases[] = {
      {"Sin", ops::Sin, -3, 3},        {"Cos", ops::Cos, -3, 3},
      {"Tan", ops::Tan, -1.2, 1.2},    {"Asin", ops::Asin, -0.9, 0.9},
      {"Acos", ops::Acos, -0.9, 0.9},  {"Atan", ops::Atan, -3, 3},
      {"Sinh", ops::Sinh, -2, 2},      {"Cosh", ops::Cosh, -2, 2},
      {"Asinh", ops::Asinh, -3, 3},    {"Acosh", ops::Acosh, 1.2, 4},
      {"Atanh", ops::Atanh, -0.9, 0.9}, {"Erf", ops::Erf, -2, 2},
  };
  for (const Case& c : cases) {
    CheckGradientsAllModes(c.name, [&](const Scope& s, const Xs& in) { return c.fn(s, in[0]); },
                           {RandomTensor({2, 3}, 41, c.lo, c.hi)});
  }
}

TEST_CASE("gradients of LeakyRelu and Selu, and of their derivative ops") {
  // Values away from the kink at 0 on both sides.
  const Tensor x = Tensor::FromVector<double>({-1.7, -0.4, -0.05, 0.3, 1.1, 2.6},
                                              TensorShape{2, 3});
  CheckGradientsAllModes("LeakyRelu", [](const Scope& s, const Xs& in) {
    return ops::LeakyRelu(s, in[0]);
  }, {x});
  CheckGradientsAllModes("LeakyRelu alpha 0.01", [](const Scope& s, const Xs& in) {
    return ops::LeakyRelu(s, in[0], 0.01);
  }, {x});
  CheckGradientsAllModes("Selu", [](const Scope& s, const Xs& in) {
    return ops::Selu(s, in[0]);
  }, {x});
  // Second order: the derivative ops differentiated in both inputs.
  const Tensor g = RandomTensor({2, 3}, 42);
  CheckGradientsAllModes("LeakyReluGrad", [](const Scope& s, const Xs& in) {
    return s.AddOperation("LeakyReluGrad", {in[0], in[1]}, {{"alpha", 0.3}}).output(0);
  }, {g, x});
  CheckGradientsAllModes("SeluGrad", [](const Scope& s, const Xs& in) {
    return s.AddOperation("SeluGrad", {in[0], in[1]}).output(0);
  }, {g, x});
}

TEST_CASE("FloorMod's gradient is 1 for x and -FloorDiv(x, y) for y, broadcast undone") {
  // x / y stays inside (2, 3) and (-3, -2): away from FloorMod's jumps.
  const Tensor x = Tensor::FromVector<double>({2.2, 2.5, 2.8, -2.3, -2.6, -2.75},
                                              TensorShape{2, 3});
  CheckGradientsAllModes("FloorMod", [](const Scope& s, const Xs& in) {
    return ops::FloorMod(s, in[0], in[1]);
  }, {x, RandomTensor({3}, 43, 1.0, 1.05)});
}

TEST_CASE("Ceil, Round and FloorDiv pass no gradient; Mod has none") {
  // y = f(x) + x: the gradient is 1, all of it through the Add.
  for (const char* op : {"Ceil", "Round"}) {
    CheckGradientsAllModes(op, [&](const Scope& s, const Xs& in) {
      return ops::Add(s, s.AddOperation(op, {in[0]}).output(0), in[0]);
    }, {RandomTensor({2, 3}, 44, 0.1, 0.4)});
  }
  CheckGradientsAllModes("FloorDiv", [](const Scope& s, const Xs& in) {
    return ops::Add(s, ops::FloorDiv(s, in[0], 2.0), in[0]);
  }, {RandomTensor({2, 3}, 45, 0.1, 1.9)});

  testing::ApiEnv env;
  const Scope root = env.Root();
  const Output x = ops::Placeholder(root, DType::kFloat64, {3});
  auto g = AddGradients(root, {ops::Sum(root, ops::Mod(root, x, 2.0), 0)}, {x});
  INFO(g.status().ToString());
  CHECK(g.status().code() == Code::kNotFound);
  CHECK(g.status().message().find("Mod") != std::string::npos);
}

}  // namespace
}  // namespace tfd
