// ops::Cond (Switch and Merge): the taken branch's value comes out, the
// untaken branch's nodes never run (its side effects do not happen), nested
// conds work, gradients reach the inputs through the taken side only and
// match finite differences, and a branch may use tensors from outside as
// TF1's cond does (switched in like its inputs).
#include <catch2/catch.hpp>

#include "api/control_flow.h"
#include "api/variables.h"
#include "common/gradients.h"
#include "tests/api/api_test_util.h"

namespace tfd {
namespace {

using testing::ApiEnv;

Tensor Scalar(double v) { return Tensor::Scalar(v); }
Tensor Bool(bool v) { return Tensor::Scalar(v); }

// y = pred ? x * 3 : x + 100, with a counter bumped in each branch.
struct Counted {
  Output pred, x, y;
  ops::Variable taken_true, taken_false;
};

Counted BuildCounted(const Scope& root) {
  Counted c;
  c.pred = ops::Placeholder(root.WithOpName("pred"), DType::kBool, PartialShape({}));
  c.x = ops::Placeholder(root.WithOpName("x"), DType::kFloat64, PartialShape({}));
  c.taken_true = ops::Variable(root.WithOpName("taken_true"), {}, DType::kFloat64,
                               ops::Initializer::Zeros());
  c.taken_false = ops::Variable(root.WithOpName("taken_false"), {}, DType::kFloat64,
                                ops::Initializer::Zeros());
  auto bump = [](const Scope& s, const ops::Variable& v, const Output& out) {
    Output counted = ops::AssignAdd(s, v.ref(), 1.0);
    return ops::Identity(s.WithControlDependencies({counted}), out);
  };
  c.y = ops::Cond(
      root, c.pred, {c.x},
      [&](const Scope& s, const std::vector<Output>& in) {
        return std::vector<Output>{bump(s, c.taken_true, ops::Mul(s, in[0], 3.0))};
      },
      [&](const Scope& s, const std::vector<Output>& in) {
        return std::vector<Output>{bump(s, c.taken_false, ops::Add(s, in[0], 100.0))};
      })[0];
  return c;
}

TEST_CASE("Cond returns the taken branch and never runs the other") {
  ApiEnv env;
  const Scope root = env.Root();
  Counted c = BuildCounted(root);
  Operation init = ops::GlobalVariablesInitializer(root);
  auto session = env.Session(root);
  REQUIRE(session->Run({}, {}, {init.name}).ok());
  for (bool pred : {true, false, true, true}) {
    INFO("pred " << pred);
    auto out = session->Run({{c.pred.name(), Bool(pred)}, {c.x.name(), Scalar(2)}}, {c.y.name()}, {});
    REQUIRE(out.ok());
    CHECK(out->fetches[0].data<double>()[0] == (pred ? 6.0 : 102.0));
  }
  auto counts = session->Run({}, {c.taken_true.value().name(), c.taken_false.value().name()}, {});
  REQUIRE(counts.ok());
  CHECK(counts->fetches[0].data<double>()[0] == 3);
  CHECK(counts->fetches[1].data<double>()[0] == 1);
}

TEST_CASE("Nested conds pick one of four values") {
  ApiEnv env;
  const Scope root = env.Root();
  Output a = ops::Placeholder(root.WithOpName("a"), DType::kBool, PartialShape({}));
  Output b = ops::Placeholder(root.WithOpName("b"), DType::kBool, PartialShape({}));
  Output x = ops::Placeholder(root.WithOpName("x"), DType::kFloat64, PartialShape({}));
  auto inner = [&](double add_true, double add_false) {
    return [&, add_true, add_false](const Scope& s, const std::vector<Output>& in) {
      return ops::Cond(
          s, in[1], {in[0]},
          [=](const Scope& t, const std::vector<Output>& v) {
            return std::vector<Output>{ops::Add(t, v[0], add_true)};
          },
          [=](const Scope& f, const std::vector<Output>& v) {
            return std::vector<Output>{ops::Add(f, v[0], add_false)};
          });
    };
  };
  Output y = ops::Cond(root, a, {x, b}, inner(1, 2), inner(10, 20))[0];
  auto session = env.Session(root);
  for (int i = 0; i < 4; ++i) {
    const bool av = i & 1, bv = i & 2;
    auto out = session->Run({{a.name(), Bool(av)}, {b.name(), Bool(bv)}, {x.name(), Scalar(0)}},
                            {y.name()}, {});
    REQUIRE(out.ok());
    CHECK(out->fetches[0].data<double>()[0] == (av ? (bv ? 1 : 2) : (bv ? 10 : 20)));
  }
}

TEST_CASE("Cond's gradient flows through the taken branch only") {
  ApiEnv env;
  const Scope root = env.Root();
  Output pred = ops::Placeholder(root.WithOpName("pred"), DType::kBool, PartialShape({}));
  Output x = ops::Placeholder(root.WithOpName("x"), DType::kFloat64, PartialShape({}));
  Output w = ops::Placeholder(root.WithOpName("w"), DType::kFloat64, PartialShape({}));
  // true: x * w (uses both); false: x * x (w gets no gradient from it).
  Output y = ops::Cond(
      root, pred, {x, w},
      [](const Scope& s, const std::vector<Output>& in) {
        return std::vector<Output>{ops::Mul(s, in[0], in[1])};
      },
      [](const Scope& s, const std::vector<Output>& in) {
        return std::vector<Output>{ops::Mul(s, in[0], in[0])};
      })[0];
  // x is also used outside the cond: its gradients add up.
  Output loss = ops::Add(root, y, ops::Mul(root, x, 5.0));
  auto g = AddGradients(root, {loss}, {x, w});
  REQUIRE(g.ok());
  auto session = env.Session(root);
  const double xv = 3, wv = 7;
  for (bool p : {true, false}) {
    INFO("pred " << p);
    auto out = session->Run({{pred.name(), Bool(p)}, {x.name(), Scalar(xv)}, {w.name(), Scalar(wv)}},
                            {(*g)[0].name(), (*g)[1].name()}, {});
    REQUIRE(out.ok());
    CHECK(out->fetches[0].data<double>()[0] == (p ? wv + 5 : 2 * xv + 5));
    CHECK(out->fetches[1].data<double>()[0] == (p ? xv : 0.0));
  }
}

TEST_CASE("Cond's gradient matches finite differences on each side") {
  for (bool taken : {true, false}) {
    INFO("pred " << taken);
    testing::CheckGradients("Cond", [taken](const Scope& s, const std::vector<Output>& x) {
      return ops::Cond(
          s, ops::Const(s, Bool(taken)), {x[0], x[1]},
          [](const Scope& b, const std::vector<Output>& in) {
            return std::vector<Output>{ops::Tanh(b, ops::Mul(b, in[0], in[1]))};
          },
          [](const Scope& b, const std::vector<Output>& in) {
            return std::vector<Output>{ops::Sub(b, ops::Square(b, in[0]), in[1])};
          })[0];
    }, {testing::RandomTensor({2, 3}, 1), testing::RandomTensor({2, 3}, 2)});
  }
}

TEST_CASE("A branch may use tensors from outside: switched in, with their gradients") {
  ApiEnv env;
  const Scope root = env.Root();
  Output pred = ops::Placeholder(root.WithOpName("pred"), DType::kBool, PartialShape({}));
  Output x = ops::Placeholder(root.WithOpName("x"), DType::kFloat64, PartialShape({}));
  Output w = ops::Placeholder(root.WithOpName("w"), DType::kFloat64, PartialShape({}));
  Output outside = ops::Neg(root.WithOpName("outside"), x);
  ops::Variable taken_false(root.WithOpName("taken_false"), {}, DType::kFloat64,
                            ops::Initializer::Zeros());
  // TF1's tf.cond(pred, lambda: x * w - x, lambda: w): nothing passed in.
  Output y = ops::Cond(
      root, pred, {},
      [&](const Scope& s, const std::vector<Output>&) {
        return std::vector<Output>{ops::Add(s, ops::Mul(s, x, w), outside)};
      },
      [&](const Scope& s, const std::vector<Output>&) {
        Output counted = ops::AssignAdd(s, taken_false.ref(), 1.0);
        return std::vector<Output>{ops::Identity(s.WithControlDependencies({counted}), w)};
      })[0];
  auto g = AddGradients(root, {y}, {x, w});
  REQUIRE(g.ok());
  REQUIRE(root.ok());
  // One Switch per tensor and side: x, w and outside on the true side, w
  // on the false side, beside the pivots' two.
  int switches = 0;
  for (int id = 0; id < root.num_nodes(); ++id) {
    const NodeDef& n = root.node(id);
    if (n.op == "Switch" && n.name.rfind("cond/", 0) == 0) ++switches;
  }
  CHECK(switches == 6);
  Operation init = ops::GlobalVariablesInitializer(root);
  auto session = env.Session(root);
  REQUIRE(session->Run({}, {}, {init.name}).ok());
  const double xv = 3, wv = 7;
  for (bool p : {true, false, true}) {
    INFO("pred " << p);
    auto out = session->Run({{pred.name(), Bool(p)}, {x.name(), Scalar(xv)}, {w.name(), Scalar(wv)}},
                            {y.name(), (*g)[0].name(), (*g)[1].name()}, {});
    REQUIRE(out.ok());
    CHECK(out->fetches[0].data<double>()[0] == (p ? xv * wv - xv : wv));
    CHECK(out->fetches[1].data<double>()[0] == (p ? wv - 1 : 0.0));
    CHECK(out->fetches[2].data<double>()[0] == (p ? xv : 1.0));
  }
  auto count = session->Run({}, {taken_false.value().name()}, {});
  REQUIRE(count.ok());
  CHECK(count->fetches[0].data<double>()[0] == 1);  // only the false run bumped it
}

TEST_CASE("A branch that returns an outside tensor as it is returns it switched") {
  ApiEnv env;
  const Scope root = env.Root();
  Output pred = ops::Placeholder(root.WithOpName("pred"), DType::kBool, PartialShape({}));
  Output a = ops::Placeholder(root.WithOpName("a"), DType::kFloat64, PartialShape({}));
  Output b = ops::Placeholder(root.WithOpName("b"), DType::kFloat64, PartialShape({}));
  // tf.cond(pred, lambda: a, lambda: b)
  Output y = ops::Cond(
      root, pred, {}, [&](const Scope&, const std::vector<Output>&) { return std::vector<Output>{a}; },
      [&](const Scope&, const std::vector<Output>&) { return std::vector<Output>{b}; })[0];
  REQUIRE(root.ok());
  auto session = env.Session(root);
  for (bool p : {true, false}) {
    auto out = session->Run({{pred.name(), Bool(p)}, {a.name(), Scalar(1)}, {b.name(), Scalar(2)}},
                            {y.name()}, {});
    REQUIRE(out.ok());
    CHECK(out->fetches[0].data<double>()[0] == (p ? 1.0 : 2.0));
  }
}

TEST_CASE("Branches with different numbers of outputs are refused") {
  ApiEnv env;
  const Scope root = env.Root();
  Output x = ops::Placeholder(root.WithOpName("x"), DType::kFloat64, PartialShape({}));
  auto out = ops::Cond(
      root, false, {x}, [](const Scope&, const std::vector<Output>& in) { return in; },
      [](const Scope&, const std::vector<Output>&) { return std::vector<Output>{}; });
  CHECK(root.status().code() == Code::kInvalidArgument);
  CHECK(out.size() == 1);
  CHECK_FALSE(out[0].valid());
}

TEST_CASE("Fetching the untaken side of a Switch is an error, not a hang") {
  ApiEnv env;
  const Scope root = env.Root();
  Output x = ops::Placeholder(root.WithOpName("x"), DType::kFloat64, PartialShape({}));
  Output pred = ops::Placeholder(root.WithOpName("pred"), DType::kBool, PartialShape({}));
  Operation sw = root.WithOpName("sw").AddOperation("Switch", {x, pred});
  auto session = env.Session(root);
  auto out = session->Run({{x.name(), Scalar(1)}, {pred.name(), Bool(true)}},
                          {sw.output(0).name()}, {});
  REQUIRE_FALSE(out.ok());
  CHECK_THAT(out.status().message(), Catch::Contains("sw"));
}

}  // namespace
}  // namespace tfd
