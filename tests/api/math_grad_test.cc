// Every math op's gradient against central finite differences in float64,
// with the inputs' shapes known, of known rank only, and unknown (the
// gradient functions compute shapes in the graph when they must).
#include <catch2/catch.hpp>

#include "tests/api/api_test_util.h"

namespace tfd {
namespace {

using testing::CheckGradientsAllModes;
using testing::RandomTensor;
using Xs = std::vector<Output>;

// A tensor away from 0: values in [lo, hi).
Tensor Positive(const TensorShape& s, uint32_t seed) { return RandomTensor(s, seed, 0.5, 2.0); }

TEST_CASE("gradients of unary math ops match finite differences") {
  struct Case {
    const char* name;
    Output (*fn)(const Scope&, const ops::Input&);
    bool positive;  // domain needs x > 0
  };
  const Case cases[] = {
      {"Neg", ops::Neg, false},         {"Square", ops::Square, false},
      {"Sqrt", ops::Sqrt, true},        {"Rsqrt", ops::Rsqrt, true},
      {"Reciprocal", ops::Reciprocal, true},
      {"Exp", ops::Exp, false},         {"Log", ops::Log, true},
      {"Abs", ops::Abs, false},         {"Identity", ops::Identity, false},
  };
  for (const Case& c : cases) {
    const Tensor x = c.positive ? Positive({2, 3}, 1) : RandomTensor({2, 3}, 1);
    CheckGradientsAllModes(c.name, [&](const Scope& s, const Xs& in) { return c.fn(s, in[0]); },
                           {x});
  }
  // Rank 0 and empty tensors take the same paths.
  CheckGradientsAllModes("Square of a scalar",
                         [](const Scope& s, const Xs& in) { return ops::Square(s, in[0]); },
                         {Tensor::Scalar<double>(1.5)});
  CheckGradientsAllModes("Exp of an empty tensor",
                         [](const Scope& s, const Xs& in) { return ops::Exp(s, in[0]); },
                         {RandomTensor({0, 3}, 1)});
}

TEST_CASE("gradients of broadcasting binary ops sum over the broadcast axes") {
  struct Case {
    const char* name;
    Output (*fn)(const Scope&, const ops::Input&, const ops::Input&);
    bool positive_x, positive_y;
  };
  const Case cases[] = {
      {"Add", ops::Add, false, false},          {"Sub", ops::Sub, false, false},
      {"Mul", ops::Mul, false, false},          {"Div", ops::Div, false, true},
      {"Maximum", ops::Maximum, false, false},  {"Minimum", ops::Minimum, false, false},
      {"Pow", ops::Pow, true, false},
      {"SquaredDifference", ops::SquaredDifference, false, false},
  };
  const std::pair<TensorShape, TensorShape> shapes[] = {
      {{2, 3}, {2, 3}}, {{2, 3}, {3}}, {{2, 1}, {1, 3}}, {{}, {2, 3}}, {{3, 1, 2}, {2}},
  };
  for (const Case& c : cases) {
    for (const auto& [sx, sy] : shapes) {
      const Tensor x = c.positive_x ? Positive(sx, 2) : RandomTensor(sx, 2);
      const Tensor y = c.positive_y ? Positive(sy, 3) : RandomTensor(sy, 3);
      CheckGradientsAllModes(std::string(c.name) + " " + sx.ToString() + " " + sy.ToString(),
                             [&](const Scope& s, const Xs& in) { return c.fn(s, in[0], in[1]); },
                             {x, y});
    }
  }
}

TEST_CASE("a tensor used twice gets the sum of both gradients") {
  // y = x * x + x: dy/dx = 2x + 1, through AddN of the two paths.
  CheckGradientsAllModes("x * x + x", [](const Scope& s, const Xs& in) {
    return ops::Add(s, ops::Mul(s, in[0], in[0]), in[0]);
  }, {RandomTensor({3}, 4)});
  CheckGradientsAllModes("AddN", [](const Scope& s, const Xs& in) {
    return ops::AddN(s, {in[0], in[1], in[0]});
  }, {RandomTensor({2, 2}, 5), RandomTensor({2, 2}, 6)});
}

TEST_CASE("MatMul gradients for every combination of transposes") {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      const Tensor a = RandomTensor(ta ? TensorShape{3, 2} : TensorShape{2, 3}, 7);
      const Tensor b = RandomTensor(tb ? TensorShape{4, 3} : TensorShape{3, 4}, 8);
      CheckGradientsAllModes(
          std::string("MatMul ta=") + (ta ? "1" : "0") + " tb=" + (tb ? "1" : "0"),
          [&](const Scope& s, const Xs& in) {
            return ops::MatMul(s, in[0], in[1], {.transpose_a = ta, .transpose_b = tb});
          },
          {a, b});
    }
  }
}

TEST_CASE("BatchMatMul gradients for every adjoint, V2's summed over broadcast batches") {
  for (bool ax : {false, true}) {
    for (bool ay : {false, true}) {
      const std::string what =
          std::string(" adj_x=") + (ax ? "1" : "0") + " adj_y=" + (ay ? "1" : "0");
      // [2, 3] x [3, 4] products; V2 with x's batch [2, 1] against y's [3].
      const Tensor x = RandomTensor(ax ? TensorShape{2, 3, 2} : TensorShape{2, 2, 3}, 12);
      const Tensor y = RandomTensor(ay ? TensorShape{2, 4, 3} : TensorShape{2, 3, 4}, 13);
      CheckGradientsAllModes("BatchMatMul" + what, [&](const Scope& s, const Xs& in) {
        return ops::BatchMatMul(s, in[0], in[1], {.adj_x = ax, .adj_y = ay});
      }, {x, y});
      const Tensor xb = RandomTensor(ax ? TensorShape{2, 1, 3, 2} : TensorShape{2, 1, 2, 3}, 14);
      const Tensor yb = RandomTensor(ay ? TensorShape{3, 4, 3} : TensorShape{3, 3, 4}, 15);
      CheckGradientsAllModes("BatchMatMulV2" + what, [&](const Scope& s, const Xs& in) {
        return ops::BatchMatMulV2(s, in[0], in[1], {.adj_x = ax, .adj_y = ay});
      }, {xb, yb}, {testing::ShapeMode::kKnown, testing::ShapeMode::kUnknownDims});
    }
  }
}

TEST_CASE("TopKV2's gradient reaches the chosen elements only") {
  // Distinct values: the choice does not change under a small step.
  const Tensor x = Tensor::FromVector<double>({0.3, -1.2, 2.5, 0.9, 1.7, -0.4, 3.1, 0.1, -2.2,
                                               1.4, 0.6, -0.8},
                                              TensorShape{2, 2, 3});
  for (int k : {0, 2, 3}) {
    CheckGradientsAllModes("TopKV2 k=" + std::to_string(k), [&](const Scope& s, const Xs& in) {
      return ops::TopKV2(s, in[0], k).values;
    }, {x});
  }
  CheckGradientsAllModes("TopKV2 of a vector", [&](const Scope& s, const Xs& in) {
    return ops::TopKV2(s, in[0], 2).values;
  }, {Tensor::FromVector<double>({0.5, -1, 2, 1.5})});
}

TEST_CASE("reduction gradients spread dy back over the reduced axes") {
  struct Case {
    const char* name;
    Output (*fn)(const Scope&, const ops::Input&, const ops::Input&, ops::ReduceAttrs);
  };
  const Case cases[] = {{"Sum", ops::Sum}, {"Mean", ops::Mean}, {"Max", ops::Max},
                        {"Min", ops::Min}, {"Prod", ops::Prod}};
  const std::vector<std::vector<int>> axes_list = {{1}, {0, 1}, {-1}, {0}, {}};
  // Distinct values keep Max and Min differentiable; all away from zero for Prod.
  const Tensor x = Tensor::FromVector<double>({0.7, -1.3, 1.9, 0.6, 1.1, -0.8},
                                              TensorShape{2, 3});
  for (const Case& c : cases) {
    for (const auto& axes : axes_list) {
      for (bool keep : {false, true}) {
        std::string what = std::string(c.name) + " axes [";
        for (int a : axes) what += std::to_string(a) + " ";
        what += keep ? "] keep_dims" : "]";
        const std::vector<int32_t> axes32(axes.begin(), axes.end());
        CheckGradientsAllModes(what, [&](const Scope& s, const Xs& in) {
          return c.fn(s, in[0], Tensor::FromVector<int32_t>(axes32), {.keep_dims = keep});
        }, {x});
      }
    }
    CheckGradientsAllModes(std::string(c.name) + " over a scalar axis",
                           [&](const Scope& s, const Xs& in) {
                             return c.fn(s, in[0], 1, {});
                           }, {x});
  }
}

TEST_CASE("reduction gradients with axes computed at run time") {
  // The axes come from a node with no graph-time value, so the reduced shape
  // is computed in the graph.
  CheckGradientsAllModes("Sum over Identity(axes)", [](const Scope& s, const Xs& in) {
    return ops::Sum(s, in[0], ops::Identity(s, {-1}));
  }, {RandomTensor({2, 3}, 9)});
  CheckGradientsAllModes("Max over Identity(axes)", [](const Scope& s, const Xs& in) {
    return ops::Max(s, in[0], ops::Identity(s, {0}), {.keep_dims = true});
  }, {RandomTensor({2, 3}, 10)});
}

TEST_CASE("Cumsum's gradient sums dy the other way along the axis") {
  for (bool exclusive : {false, true}) {
    for (bool reverse : {false, true}) {
      for (int axis : {0, 1, -1}) {
        CheckGradientsAllModes(
            "Cumsum axis " + std::to_string(axis) + (exclusive ? " exclusive" : "") +
                (reverse ? " reverse" : ""),
            [&](const Scope& s, const Xs& in) {
              return ops::Cumsum(s, in[0], axis, {.exclusive = exclusive, .reverse = reverse});
            },
            {RandomTensor({3, 4}, 11)});
      }
    }
  }
}

TEST_CASE("Select routes the gradient by the condition") {
  const Tensor cond = Tensor::FromVector<bool>({true, false, false, true, true, false},
                                               TensorShape{2, 3});
  CheckGradientsAllModes("Select", [&](const Scope& s, const Xs& in) {
    return ops::Select(s, ops::Const(s, cond), in[0], in[1]);
  }, {RandomTensor({2, 3}, 11), RandomTensor({2, 3}, 12)});
}

}  // namespace
}  // namespace tfd
