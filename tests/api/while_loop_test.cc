// ops::WhileLoop through a session: sums over fed bounds (zero iterations
// too), nested loops, a fed tensor used as a loop invariant, a loop inside a
// cond's branch (dead when not taken, with a side effect that must not
// happen), a variable updated and read in every iteration,
// maximum_iterations, a runaway loop stopped by the run's deadline with the
// session serving the next run, shape invariants, and malformed loops
// refused.
#include <optional>

#include <catch2/catch.hpp>

#include "api/control_flow.h"
#include "api/variables.h"
#include "tests/api/api_test_util.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;
using testing::ApiEnv;

Tensor I64(int64_t v) { return Tensor::Scalar(v); }
int64_t Value(const Tensor& t) { return t.data<int64_t>()[0]; }

// (i, sum) = (1, 0); while i <= n: (i + 1, sum + i)
std::vector<Output> SumTo(const Scope& s, const Output& n) {
  return ops::WhileLoop(
      s, [&](const Scope& c, const std::vector<Output>& v) { return ops::LessEqual(c, v[0], n); },
      [](const Scope& b, const std::vector<Output>& v) {
        return std::vector<Output>{ops::Add(b, v[0], int64_t{1}), ops::Add(b, v[1], v[0])};
      },
      {ops::Const(s, int64_t{1}), ops::Const(s, int64_t{0})});
}

TEST_CASE("WhileLoop sums 1..n for a fed n, zero iterations included") {
  ApiEnv env;
  const Scope root = env.Root();
  Output n = ops::Placeholder(root.WithOpName("n"), DType::kInt64, PartialShape({}));
  std::vector<Output> r = SumTo(root, n);
  auto session = env.Session(root);
  for (int64_t v : {0, 1, 5, 100, 3}) {
    INFO("n " << v);
    auto out = session->Run({{n.name(), I64(v)}}, {r[0].name(), r[1].name()}, {});
    INFO(out.status().ToString());
    REQUIRE(out.ok());
    CHECK(Value(out->fetches[0]) == v + 1);
    CHECK(Value(out->fetches[1]) == v * (v + 1) / 2);
  }
}

TEST_CASE("WhileLoop nests: a loop in a loop's body uses the outer loop's variable") {
  ApiEnv env;
  const Scope root = env.Root();
  Output n = ops::Placeholder(root.WithOpName("n"), DType::kInt64, PartialShape({}));
  // sum over i in 1..n of (sum over j in 1..i of j)
  std::vector<Output> r = ops::WhileLoop(
      root, [&](const Scope& c, const std::vector<Output>& v) { return ops::LessEqual(c, v[0], n); },
      [](const Scope& b, const std::vector<Output>& v) {
        return std::vector<Output>{ops::Add(b, v[0], int64_t{1}), ops::Add(b, v[1], SumTo(b, v[0])[1])};
      },
      {ops::Const(root, int64_t{1}), ops::Const(root, int64_t{0})});
  auto session = env.Session(root);
  for (int64_t v : {0, 1, 4, 20}) {
    INFO("n " << v);
    auto out = session->Run({{n.name(), I64(v)}}, {r[1].name()}, {});
    INFO(out.status().ToString());
    REQUIRE(out.ok());
    CHECK(Value(out->fetches[0]) == v * (v + 1) * (v + 2) / 6);
  }
}

TEST_CASE("WhileLoop: a fed tensor used in the body is the same in every iteration") {
  ApiEnv env;
  const Scope root = env.Root();
  Output x = ops::Placeholder(root.WithOpName("x"), DType::kFloat64, PartialShape({2}));
  // acc = acc * 2 + x, 3 times, from 0: 7x
  std::vector<Output> r = ops::WhileLoop(
      root, [](const Scope& c, const std::vector<Output>& v) { return ops::Less(c, v[0], 3); },
      [&](const Scope& b, const std::vector<Output>& v) {
        return std::vector<Output>{ops::Add(b, v[0], 1), ops::Add(b, ops::Mul(b, v[1], 2.0), x)};
      },
      {ops::Const(root, 0), ops::ZerosLike(root, x)});
  auto session = env.Session(root);
  auto out = session->Run({{x.name(), Tensor::FromVector<double>({1.5, -2})}}, {r[1].name()}, {});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK(TensorsEqual(out->fetches[0], Tensor::FromVector<double>({10.5, -14})));
}

TEST_CASE("WhileLoop in a cond's untaken branch does not run, nor its side effect") {
  ApiEnv env;
  const Scope root = env.Root();
  Output pred = ops::Placeholder(root.WithOpName("pred"), DType::kBool, PartialShape({}));
  Output n = ops::Placeholder(root.WithOpName("n"), DType::kInt64, PartialShape({}));
  ops::Variable runs = ops::Variable(root.WithOpName("runs"), {}, DType::kInt64,
                                     ops::Initializer::Zeros());
  Output y = ops::Cond(
      root, pred, {n},
      [&](const Scope& s, const std::vector<Output>& in) {
        Output counted = ops::AssignAdd(s, runs.ref(), int64_t{1});
        return std::vector<Output>{
            ops::Identity(s.WithControlDependencies({counted}), SumTo(s, in[0])[1])};
      },
      [](const Scope& s, const std::vector<Output>& in) {
        return std::vector<Output>{ops::Neg(s, in[0])};
      })[0];
  Operation init = ops::GlobalVariablesInitializer(root);
  auto session = env.Session(root);
  REQUIRE(session->Run({}, {}, {init.name}).ok());
  for (bool p : {false, true, false}) {
    INFO("pred " << p);
    auto out = session->Run({{pred.name(), Tensor::Scalar(p)}, {n.name(), I64(10)}}, {y.name()}, {});
    INFO(out.status().ToString());
    REQUIRE(out.ok());
    CHECK(Value(out->fetches[0]) == (p ? 55 : -10));
  }
  auto count = session->Run({}, {runs.value().name()}, {});
  REQUIRE(count.ok());
  CHECK(Value(count->fetches[0]) == 1);
}

// A variable's ref() used in a body enters the loop as a reference: the
// body updates the variable, and reads it afresh, in every iteration.
TEST_CASE("WhileLoop's body updates a variable and reads it afresh in every iteration") {
  ApiEnv env;
  const Scope root = env.Root();
  Output n = ops::Placeholder(root.WithOpName("n"), DType::kInt64, PartialShape({}));
  ops::Variable count(root.WithOpName("count"), {}, DType::kInt64, ops::Initializer::Zeros());
  // (i, sum) = (0, 0); while i < n: count += 1, then sum += count.
  std::vector<Output> r = ops::WhileLoop(
      root, [&](const Scope& c, const std::vector<Output>& v) { return ops::Less(c, v[0], n); },
      [&](const Scope& b, const std::vector<Output>& v) {
        Output added = ops::AssignAdd(b, count.ref(), int64_t{1});
        Output read = ops::Identity(b.WithControlDependencies({added}), count.ref());
        return std::vector<Output>{ops::Add(b.WithControlDependencies({read}), v[0], int64_t{1}),
                                   ops::Add(b, v[1], read)};
      },
      {ops::Const(root, int64_t{0}), ops::Const(root, int64_t{0})});
  Operation init = ops::GlobalVariablesInitializer(root);
  INFO(root.status().ToString());
  REQUIRE(root.ok());
  auto session = env.Session(root);
  REQUIRE(session->Run({}, {}, {init.name}).ok());
  int64_t moved = 0;
  for (int64_t v : {4, 0, 10}) {
    INFO("n " << v);
    auto out = session->Run({{n.name(), I64(v)}}, {r[1].name()}, {});
    INFO(out.status().ToString());
    REQUIRE(out.ok());
    CHECK(Value(out->fetches[0]) == v * moved + v * (v + 1) / 2);
    moved += v;
    auto after = session->Run({}, {count.value().name()}, {});
    REQUIRE(after.ok());
    CHECK(Value(after->fetches[0]) == moved);
  }
}

// TF1's init_scope: a variable made in the body through OutsideControlFlow()
// belongs to no loop, so the global initializer runs its initializer once,
// outside, and every iteration reads the one variable.
TEST_CASE("A variable made in a body outside control flow is one variable, initialized outside") {
  ApiEnv env;
  const Scope root = env.Root();
  std::optional<ops::Variable> w;
  // (i, sum) = (0, 0); while i < 3: sum += w, with w = 5 made in the body.
  std::vector<Output> r = ops::WhileLoop(
      root, [&](const Scope& c, const std::vector<Output>& v) { return ops::Less(c, v[0], 3); },
      [&](const Scope& b, const std::vector<Output>& v) {
        w.emplace(b.OutsideControlFlow().WithOpName("w"), TensorShape({}), DType::kInt32,
                  ops::Initializer::Constant(5.0));
        return std::vector<Output>{ops::Add(b, v[0], 1), ops::Add(b, v[1], w->value())};
      },
      {ops::Const(root, 0), ops::Const(root, 0)});
  Operation init = ops::GlobalVariablesInitializer(root);
  INFO(root.status().ToString());
  REQUIRE(root.ok());
  auto session = env.Session(root);
  REQUIRE(session->Run({}, {}, {init.name}).ok());
  auto out = session->Run({}, {r[1].name()}, {});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK(out->fetches[0].data<int32_t>()[0] == 15);

  // Its initializer may not read what the body computes.
  ops::WhileLoop(
      root, [&](const Scope& c, const std::vector<Output>& v) { return ops::Less(c, v[0], 3); },
      [&](const Scope& b, const std::vector<Output>& v) {
        const Scope out = b.OutsideControlFlow();
        const Operation bad = out.WithOpName("bad").AddOperation(
            "VariableV2", {}, {{"shape", PartialShape({})}, {"dtype", DType::kInt32}});
        out.AddOperation("Assign", {bad.output(0), v[0]});
        return std::vector<Output>{ops::Add(b, v[0], 1)};
      },
      {ops::Const(root, 0)});
  CHECK(root.status().code() == Code::kInvalidArgument);
  CHECK_THAT(root.status().message(), Catch::Contains("made inside while loop"));
}

TEST_CASE("WhileLoop's maximum_iterations ends a loop whose condition still holds") {
  ApiEnv env;
  const Scope root = env.Root();
  std::vector<Output> r = ops::WhileLoop(
      root, [](const Scope& c, const std::vector<Output>& v) { return ops::Const(c, true); },
      [](const Scope& b, const std::vector<Output>& v) {
        return std::vector<Output>{ops::Add(b, v[0], 3.0)};
      },
      {ops::Const(root, 0.5)}, {.maximum_iterations = 4});
  auto out = env.Run(root, {}, {r[0].name()});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK((*out)[0].data<double>()[0] == 12.5);
}

TEST_CASE("maximum_iterations may be an int32 tensor fed at run time; 0 or less runs none") {
  ApiEnv env;
  const Scope root = env.Root();
  Output limit = ops::Placeholder(root.WithOpName("limit"), DType::kInt32, PartialShape({}));
  std::vector<Output> r = ops::WhileLoop(
      root, [](const Scope& c, const std::vector<Output>& v) { return ops::Const(c, true); },
      [](const Scope& b, const std::vector<Output>& v) {
        return std::vector<Output>{ops::Add(b, v[0], int64_t{1})};
      },
      {ops::Const(root, int64_t{0})}, {.maximum_iterations = limit});
  REQUIRE(root.ok());
  auto session = env.Session(root);
  for (int32_t v : {5, 0, -3, 1}) {
    INFO("limit " << v);
    auto out = session->Run({{limit.name(), Tensor::Scalar<int32_t>(v)}}, {r[0].name()}, {});
    INFO(out.status().ToString());
    REQUIRE(out.ok());
    CHECK(out->fetches[0].scalar<int64_t>() == std::max(v, 0));
  }
  const Scope bad = env.Root();
  ops::WhileLoop(
      bad, [](const Scope& c, const std::vector<Output>& v) { return ops::Const(c, true); },
      [](const Scope& b, const std::vector<Output>& v) { return v; }, {ops::Const(bad, 1.0)},
      {.maximum_iterations = ops::Const(bad, 2.5)});
  CHECK(bad.status().code() == Code::kInvalidArgument);
  CHECK_THAT(bad.status().message(), Catch::Contains("int32 or int64 scalar"));
}

TEST_CASE("A runaway WhileLoop ends at the run's deadline and the session runs on") {
  ApiEnv env;
  const Scope root = env.Root();
  std::vector<Output> r = ops::WhileLoop(
      root, [](const Scope& c, const std::vector<Output>& v) { return ops::Const(c, true); },
      [](const Scope& b, const std::vector<Output>& v) {
        return std::vector<Output>{ops::Add(b, v[0], int64_t{1})};
      },
      {ops::Const(root, int64_t{0})});
  Output other = ops::Add(root.WithOpName("other"), ops::Const(root, int64_t{2}), int64_t{3});
  auto session = env.Session(root);
  auto out = session->Run({}, {r[0].name()}, {}, {.deadline = 1000ms});
  CHECK(out.status().code() == Code::kDeadlineExceeded);
  auto next = session->Run({}, {other.name()}, {});
  INFO(next.status().ToString());
  REQUIRE(next.ok());
  CHECK(Value(next->fetches[0]) == 5);
}

TEST_CASE("Fetching a tensor inside a loop's body is refused, naming it") {
  ApiEnv env;
  const Scope root = env.Root();
  std::string inside;
  ops::WhileLoop(
      root, [](const Scope& c, const std::vector<Output>& v) { return ops::Less(c, v[0], 3); },
      [&](const Scope& b, const std::vector<Output>& v) {
        Output next = ops::Add(b, v[0], 1);
        inside = next.name();
        return std::vector<Output>{next};
      },
      {ops::Const(root, 0)});
  auto session = env.Session(root);
  auto out = session->Run({}, {inside}, {});
  CHECK(out.status().code() == Code::kInvalidArgument);
  CHECK_THAT(out.status().message(), Catch::Contains("fetches '" + inside.substr(0, inside.find(':')) + "'"));
  CHECK_THAT(out.status().message(), Catch::Contains("inside while loop 'while'"));
}

TEST_CASE("WhileLoop refuses a body with the wrong number or dtype of values") {
  ApiEnv env;
  const Scope root = env.Root();
  auto cond = [](const Scope& c, const std::vector<Output>& v) { return ops::Less(c, v[0], 3); };
  std::vector<Output> r = ops::WhileLoop(
      root, cond, [](const Scope& b, const std::vector<Output>& v) { return std::vector<Output>{}; },
      {ops::Const(root, 0)});
  CHECK(root.status().code() == Code::kInvalidArgument);
  CHECK_THAT(root.status().message(), Catch::Contains("returns 0 values for 1 loop variables"));
  CHECK_FALSE(r[0].valid());

  const Scope other = env.Root();
  ops::WhileLoop(
      other, cond,
      [](const Scope& b, const std::vector<Output>& v) {
        return std::vector<Output>{ops::Cast(b, v[0], DType::kFloat32)};
      },
      {ops::Const(other, 0)});
  CHECK(other.status().code() == Code::kInvalidArgument);
  CHECK_THAT(other.status().message(), Catch::Contains("while/Merge"));
}

// A vector that grows by one each iteration: [i] appended to v.
std::vector<Output> Grow(const Scope& s, const Output& n, const ops::WhileOptions& options) {
  return ops::WhileLoop(
      s, [&](const Scope& c, const std::vector<Output>& v) { return ops::Less(c, v[0], n); },
      [](const Scope& b, const std::vector<Output>& v) {
        Output one = ops::Reshape(b, v[0], ops::Const(b, Tensor::FromVector<int32_t>({1})));
        return std::vector<Output>{ops::Add(b, v[0], int64_t{1}),
                                   ops::Concat(b, {v[1], one}, int64_t{0})};
      },
      {ops::Const(s, int64_t{0}), ops::Const(s, Tensor::FromVector<int64_t>({}))}, options);
}

TEST_CASE("A loop variable keeps its shape invariant; a body contradicting it is refused") {
  ApiEnv env;
  const Scope root = env.Root();
  Output n = ops::Placeholder(root.WithOpName("n"), DType::kInt64, PartialShape({}));
  std::vector<Output> r =
      Grow(root, n, {.shape_invariants = {PartialShape({}), PartialShape({-1})}});
  REQUIRE(root.ok());
  CHECK(r[1].shape == PartialShape({-1}));  // not the first iteration's [0]
  auto session = env.Session(root);
  auto out = session->Run({{n.name(), I64(4)}}, {r[1].name()}, {});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK(out->fetches[0].shape() == TensorShape({4}));

  // Without the invariant the vector enters as [0] and comes back as [1].
  const Scope strict = env.Root();
  Output m = ops::Placeholder(strict.WithOpName("n"), DType::kInt64, PartialShape({}));
  Grow(strict, m, {});
  CHECK(strict.status().code() == Code::kInvalidArgument);
  CHECK_THAT(strict.status().message(),
             Catch::Contains("loop variable 1 of while loop 'while' enters with shape [0] but "
                             "the body returns shape [1]"));

  const Scope wrong = env.Root();
  Output k = ops::Placeholder(wrong.WithOpName("n"), DType::kInt64, PartialShape({}));
  Grow(wrong, k, {.shape_invariants = {PartialShape({})}});
  CHECK(wrong.status().code() == Code::kInvalidArgument);
  CHECK_THAT(wrong.status().message(), Catch::Contains("1 shape invariants for 2 loop variables"));
  const Scope contradicting = env.Root();
  Output j = ops::Placeholder(contradicting.WithOpName("n"), DType::kInt64, PartialShape({}));
  Grow(contradicting, j, {.shape_invariants = {PartialShape({}), PartialShape({-1, -1})}});
  CHECK(contradicting.status().code() == Code::kInvalidArgument);
  CHECK_THAT(contradicting.status().message(), Catch::Contains("does not allow"));
}

}  // namespace
}  // namespace tfd
