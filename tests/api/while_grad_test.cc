// Gradients of ops::WhileLoop (kernels/control/while_grad.h), each checked
// against central differences (CheckGradients): x**n by repeated multiply,
// a loop whose body multiplies by a loop-invariant weight matrix as an RNN
// does, several loop variables feeding each other, maximum_iterations in
// the backward pass, iterations in parallel, a loop in a cond's branch
// (taken or not), a cond in a loop's body; a recurrent net trained through
// a loop by an optimizer, its loss falling; loops nested in loops, two and
// three deep, their trip counts fixed or depending on data; a loop inside a
// cond inside a loop, refused.
#include <catch2/catch.hpp>

#include "api/control_flow.h"
#include "api/optimizers.h"
#include "api/variables.h"
#include "common/gradients.h"
#include "tests/api/api_test_util.h"

namespace tfd {
namespace {

using ops::Initializer;
using ops::Variable;
using testing::CheckGradients;
using testing::CheckGradientsAllModes;
using testing::RandomTensor;
using testing::ShapeMode;

// (i, p) = (0, 1); while i < n: (i + 1, p * x): x**n.
Output Power(const Scope& s, const Output& x, int64_t n, ops::WhileOptions options = {}) {
  return ops::WhileLoop(
      s, [n](const Scope& c, const std::vector<Output>& v) { return ops::Less(c, v[0], n); },
      [x](const Scope& b, const std::vector<Output>& v) {
        return std::vector<Output>{ops::Add(b, v[0], int64_t{1}), ops::Mul(b, v[1], x)};
      },
      {ops::Const(s, int64_t{0}), ops::OnesLike(s, x)}, options)[1];
}

TEST_CASE("the gradient of x**n built by a while loop matches finite differences") {
  for (int64_t n : {0, 1, 3, 7}) {
    CheckGradients("x**" + std::to_string(n),
                   [n](const Scope& s, const std::vector<Output>& x) { return Power(s, x[0], n); },
                   {RandomTensor({2, 3}, 11, 0.5, 1.5)});
  }
}

TEST_CASE("a loop's gradient flows to its loop variable's initial value") {
  // h = h0 * x, 4 times: d/dh0 and d/dx both checked.
  CheckGradients(
      "h0 * x**4",
      [](const Scope& s, const std::vector<Output>& in) {
        const Output x = in[1];
        return ops::WhileLoop(
            s,
            [](const Scope& c, const std::vector<Output>& v) {
              return ops::Less(c, v[0], int64_t{4});
            },
            [x](const Scope& b, const std::vector<Output>& v) {
              return std::vector<Output>{ops::Add(b, v[0], int64_t{1}), ops::Mul(b, v[1], x)};
            },
            {ops::Const(s, int64_t{0}), in[0]})[1];
      },
      {RandomTensor({3}, 12), RandomTensor({3}, 13, 0.5, 1.5)});
}

TEST_CASE("an RNN-like loop: h = tanh(h W + b) accumulates the invariants' gradients") {
  CheckGradientsAllModes(
      "tanh RNN",
      [](const Scope& s, const std::vector<Output>& in) {
        const Output w = in[1], b = in[2];
        return ops::WhileLoop(
            s,
            [](const Scope& c, const std::vector<Output>& v) {
              return ops::Less(c, v[0], int64_t{5});
            },
            [w, b](const Scope& sc, const std::vector<Output>& v) {
              Output h = ops::Tanh(sc, ops::Add(sc, ops::MatMul(sc, v[1], w), b));
              return std::vector<Output>{ops::Add(sc, v[0], int64_t{1}), h};
            },
            {ops::Const(s, int64_t{0}), in[0]})[1];
      },
      {RandomTensor({2, 3}, 21), RandomTensor({3, 3}, 22), RandomTensor({3}, 23)});
}

TEST_CASE("two float loop variables that feed each other differentiate together") {
  // (a, b) <- (a * b, a + b), 3 times; the loss uses both results.
  CheckGradients("coupled",
                 [](const Scope& s, const std::vector<Output>& in) {
                   std::vector<Output> r = ops::WhileLoop(
                       s,
                       [](const Scope& c, const std::vector<Output>& v) {
                         return ops::Less(c, v[0], int64_t{3});
                       },
                       [](const Scope& b, const std::vector<Output>& v) {
                         return std::vector<Output>{ops::Add(b, v[0], int64_t{1}),
                                                    ops::Mul(b, v[1], v[2]),
                                                    ops::Add(b, v[1], v[2])};
                       },
                       {ops::Const(s, int64_t{0}), in[0], in[1]});
                   return ops::Add(s, r[1], r[2]);
                 },
                 {RandomTensor({2}, 31, 0.5, 1), RandomTensor({2}, 32, 0.5, 1)});
}

TEST_CASE("maximum_iterations bounds the backward pass as it bounds the forward one") {
  // The condition alone would run 10 iterations; the maximum stops at 3.
  CheckGradients("x**3 by maximum_iterations",
                 [](const Scope& s, const std::vector<Output>& x) {
                   return Power(s, x[0], 10, {.maximum_iterations = 3});
                 },
                 {RandomTensor({4}, 41, 0.5, 1.5)});
}

TEST_CASE("iterations run in parallel or one at a time give the same gradient") {
  for (int parallel : {1, 4}) {
    CheckGradients("x**6, parallel_iterations " + std::to_string(parallel),
                   [parallel](const Scope& s, const std::vector<Output>& x) {
                     return Power(s, x[0], 6, {.parallel_iterations = parallel});
                   },
                   {RandomTensor({5}, 51, 0.5, 1.5)});
  }
}

TEST_CASE("a loop in a cond's branch differentiates when taken and passes no gradient when not") {
  for (bool take : {true, false}) {
    CheckGradients(take ? "loop branch taken" : "loop branch not taken",
                   [take](const Scope& s, const std::vector<Output>& x) {
                     return ops::Cond(
                         s, ops::Const(s, take), {x[0]},
                         [](const Scope& t, const std::vector<Output>& in) {
                           return std::vector<Output>{Power(t, in[0], 3)};
                         },
                         [](const Scope& f, const std::vector<Output>& in) {
                           return std::vector<Output>{ops::Mul(f, in[0], 2.0)};
                         })[0];
                   },
                   {RandomTensor({3}, 61, 0.5, 1.5)});
  }
}

TEST_CASE("an optimizer trains a recurrent net through a while loop: its loss falls") {
  // h <- tanh(h W + x), 6 times; W learns to bring the last h to a target.
  testing::ApiEnv env;
  const Scope root = env.Root();
  const Output h0 =
      ops::Const(root, Tensor::FromVector<float>({0.5f, -0.3f, 0.8f}, TensorShape{1, 3}));
  const Output x =
      ops::Const(root, Tensor::FromVector<float>({0.1f, 0.2f, -0.1f}, TensorShape{1, 3}));
  const Output y =
      ops::Const(root, Tensor::FromVector<float>({0.3f, -0.2f, 0.1f}, TensorShape{1, 3}));
  Variable step = ops::GlobalStep(root);
  Variable w(root.WithOpName("w"), {3, 3}, DType::kFloat32, Initializer::RandomNormal(0.8, 5));
  const Output wv = w.value();
  const Output h = ops::WhileLoop(
      root,
      [](const Scope& c, const std::vector<Output>& v) { return ops::Less(c, v[0], int64_t{6}); },
      [wv, x](const Scope& b, const std::vector<Output>& v) {
        Output next = ops::Tanh(b, ops::Add(b, ops::MatMul(b, v[1], wv), x));
        return std::vector<Output>{ops::Add(b, v[0], int64_t{1}), next};
      },
      {ops::Const(root, int64_t{0}), h0})[1];
  ops::Mean(root.WithOpName("loss"), ops::Square(root, ops::Sub(root, h, y)), {0, 1});
  train::GradientDescent(0.5).Minimize(root.WithOpName("train"), root.OutputOf("loss", 0), step);
  ops::GlobalVariablesInitializer(root);
  INFO(root.status().ToString());
  REQUIRE(root.ok());

  auto session = env.Session(root);
  REQUIRE(session->Run({}, {}, {"init"}).ok());
  auto first = session->Run({}, {"loss"}, {});
  REQUIRE(first.ok());
  for (int i = 0; i < 100; ++i) {
    const Status s = session->Run({}, {}, {"train"}).status();
    INFO(s.ToString());
    REQUIRE(s.ok());
  }
  auto last = session->Run({}, {"loss", "global_step/read"}, {});
  REQUIRE(last.ok());
  const float before = first->fetches[0].scalar<float>(), after = last->fetches[0].scalar<float>();
  INFO("loss " << before << " -> " << after);
  CHECK(after < 0.1f * before);
  CHECK(last->fetches[1].scalar<int64_t>() == 100);
}

TEST_CASE("a stack pops what was pushed last first, and an empty one is OUT_OF_RANGE") {
  testing::ApiEnv env;
  const Scope root = env.Root();
  const Output max = ops::Const(root, Tensor::Scalar<int32_t>(-1));
  const Output stack =
      root.AddOperation("StackV2", {max}, {{"elem_type", DType::kFloat32}}).output(0);
  Operation a = root.AddOperation("StackPushV2", {stack, ops::Const(root, 1.0f)});
  Operation b = root.WithControlDependencies({a}).AddOperation("StackPushV2",
                                                               {stack, ops::Const(root, 2.0f)});
  Operation first = root.WithOpName("first").WithControlDependencies({b}).AddOperation(
      "StackPopV2", {stack}, {{"elem_type", DType::kFloat32}});
  Operation second = root.WithOpName("second").WithControlDependencies({first}).AddOperation(
      "StackPopV2", {stack}, {{"elem_type", DType::kFloat32}});
  root.WithOpName("third").WithControlDependencies({second}).AddOperation(
      "StackPopV2", {stack}, {{"elem_type", DType::kFloat32}});
  REQUIRE(root.ok());
  auto session = env.Session(root);
  auto two = session->Run({}, {"first", "second"}, {});
  INFO(two.status().ToString());
  REQUIRE(two.ok());
  CHECK(two->fetches[0].scalar<float>() == 2.0f);
  CHECK(two->fetches[1].scalar<float>() == 1.0f);
  // Each step makes a stack of its own; this one pushes twice and pops three times.
  auto three = session->Run({}, {"third"}, {});
  REQUIRE(three.status().code() == Code::kOutOfRange);
  CHECK_THAT(three.status().message(), Catch::Contains("'third'"));
}

TEST_CASE("a stack keeps references too, and a pop of the other kind is INVALID_ARGUMENT") {
  testing::ApiEnv env;
  const Scope root = env.Root();
  const Output stack = root.AddOperation("StackV2", {ops::Const(root, Tensor::Scalar<int32_t>(-1))},
                                         {{"elem_type", DType::kString}})
                           .output(0);
  Operation ta =
      root.AddOperation("TensorArrayV3", {ops::Const(root, 1)}, {{"dtype", DType::kFloat32}});
  const Output flow =
      root.AddOperation("TensorArrayWriteV3",
                        {ta.output(0), ops::Const(root, 0), ops::Const(root, 7.0f), ta.output(1)},
                        {{"T", DType::kFloat32}})
          .output(0);
  Operation push = root.WithControlDependencies(std::vector<Output>{flow})
                       .AddOperation("_StackPushRef", {stack, ta.output(0)});
  const Output popped = root.WithControlDependencies({push})
                            .AddOperation("_StackPopRef", {stack}, {{"elem_type", DType::kString}})
                            .output(0);
  root.WithOpName("read").AddOperation("TensorArrayReadV3", {popped, ops::Const(root, 0), flow},
                                       {{"dtype", DType::kFloat32}});
  Operation again =
      root.WithControlDependencies({push}).AddOperation("_StackPushRef", {stack, ta.output(0)});
  root.WithOpName("as_tensor")
      .WithControlDependencies({again})
      .AddOperation("StackPopV2", {stack}, {{"elem_type", DType::kString}});
  REQUIRE(root.ok());
  auto session = env.Session(root);
  auto read = session->Run({}, {"read"}, {});
  INFO(read.status().ToString());
  REQUIRE(read.ok());
  CHECK(read->fetches[0].scalar<float>() == 7.0f);
  auto wrong = session->Run({}, {"as_tensor"}, {});
  REQUIRE(wrong.status().code() == Code::kInvalidArgument);
  CHECK_THAT(wrong.status().message(), Catch::Contains("not one"));
}

// (i, h) = (0, h0); while i < m: (i + 1, inner(h)), inner(h) being
// (j, u) = (0, h); while j < n: (j + 1, u * w).  h0 * w**(m n).
Output NestedPower(const Scope& s, const Output& h0, const Output& w, int64_t m, int64_t n) {
  return ops::WhileLoop(
      s, [m](const Scope& c, const std::vector<Output>& v) { return ops::Less(c, v[0], m); },
      [w, n](const Scope& b, const std::vector<Output>& v) {
        Output inner = ops::WhileLoop(
            b,
            [n](const Scope& c, const std::vector<Output>& u) { return ops::Less(c, u[0], n); },
            [w](const Scope& bb, const std::vector<Output>& u) {
              return std::vector<Output>{ops::Add(bb, u[0], int64_t{1}), ops::Mul(bb, u[1], w)};
            },
            {ops::Const(b, int64_t{0}), v[1]})[1];
        return std::vector<Output>{ops::Add(b, v[0], int64_t{1}), inner};
      },
      {ops::Const(s, int64_t{0}), h0})[1];
}

TEST_CASE("the gradient of a loop nested in another loop's body matches finite differences") {
  for (auto [m, n] : {std::pair<int64_t, int64_t>{3, 2}, {2, 0}, {0, 3}, {1, 4}}) {
    CheckGradients("h0 * w**(" + std::to_string(m) + "*" + std::to_string(n) + ")",
                   [m = m, n = n](const Scope& s, const std::vector<Output>& in) {
                     return NestedPower(s, in[0], in[1], m, n);
                   },
                   {RandomTensor({2, 3}, 71), RandomTensor({2, 3}, 72, 0.7, 1.2)});
  }
}

// An outer loop running as many times as x has elements; its iteration i
// runs an inner loop i + 1 times over a value the outer body computed, with
// a matrix from outside both: h <- tanh(h W) + a, a = sin(h) per outer step.
Output DataDependentNest(const Scope& s, const Output& h0, const Output& w,
                         ops::WhileOptions options) {
  const Output trips = ops::Cast(s, ops::Size(s, h0), DType::kInt64);
  return ops::WhileLoop(
      s,
      [trips](const Scope& c, const std::vector<Output>& v) { return ops::Less(c, v[0], trips); },
      [w, options](const Scope& b, const std::vector<Output>& v) {
        const Output i = v[0];
        const Output a = ops::Sin(b, v[1]);
        Output inner = ops::WhileLoop(
            b,
            [i](const Scope& c, const std::vector<Output>& u) {
              return ops::LessEqual(c, u[0], i);
            },
            [w, a](const Scope& bb, const std::vector<Output>& u) {
              Output next = ops::Add(bb, ops::Tanh(bb, ops::MatMul(bb, u[1], w)), a);
              return std::vector<Output>{ops::Add(bb, u[0], int64_t{1}), next};
            },
            {ops::Const(b, int64_t{0}), v[1]}, options)[1];
        return std::vector<Output>{ops::Add(b, i, int64_t{1}), inner};
      },
      {ops::Const(s, int64_t{0}), h0}, options)[1];
}

TEST_CASE("nested loops whose trip counts depend on data differentiate, in parallel or not") {
  for (int parallel : {1, 10}) {
    CheckGradients("data-dependent nest, parallel_iterations " + std::to_string(parallel),
                   [parallel](const Scope& s, const std::vector<Output>& in) {
                     return DataDependentNest(s, in[0], in[1],
                                              {.parallel_iterations = parallel});
                   },
                   {RandomTensor({1, 3}, 81, -0.5, 0.5), RandomTensor({3, 3}, 82, -0.6, 0.6)});
  }
}

TEST_CASE("inner loops of outer iterations that do not wait on each other keep their stacks apart") {
  // acc += inner_i(x), inner_i: u <- sin(u * w) i + 2 times: each outer
  // iteration's inner loop depends on x and w only, so they may all run at once.
  CheckGradients("independent inner loops",
                 [](const Scope& s, const std::vector<Output>& in) {
                   const Output x = in[0], w = in[1];
                   return ops::WhileLoop(
                       s,
                       [](const Scope& c, const std::vector<Output>& v) {
                         return ops::Less(c, v[0], int64_t{6});
                       },
                       [x, w](const Scope& b, const std::vector<Output>& v) {
                         const Output i = v[0];
                         Output inner = ops::WhileLoop(
                             b,
                             [i](const Scope& c, const std::vector<Output>& u) {
                               return ops::LessEqual(c, u[0], ops::Add(c, i, int64_t{1}));
                             },
                             [w](const Scope& bb, const std::vector<Output>& u) {
                               return std::vector<Output>{ops::Add(bb, u[0], int64_t{1}),
                                                          ops::Sin(bb, ops::Mul(bb, u[1], w))};
                             },
                             {ops::Const(b, int64_t{0}), x})[1];
                         return std::vector<Output>{ops::Add(b, i, int64_t{1}),
                                                    ops::Add(b, v[1], inner)};
                       },
                       {ops::Const(s, int64_t{0}), ops::ZerosLike(s, x)})[1];
                 },
                 {RandomTensor({4}, 101, 0.5, 1.5), RandomTensor({4}, 102, 0.5, 1.5)});
}

TEST_CASE("a loop whose body holds a cond differentiates, once refused") {
  // Odd iterations multiply by w, even ones take sin: each side's values
  // exist only in its own iterations (while_cond_grad_test.cc has more).
  CheckGradients("odd: h w, even: sin(h)",
                 [](const Scope& s, const std::vector<Output>& in) {
                   const Output w = in[1];
                   return ops::WhileLoop(
                       s,
                       [](const Scope& c, const std::vector<Output>& v) {
                         return ops::Less(c, v[0], int64_t{4});
                       },
                       [w](const Scope& b, const std::vector<Output>& v) {
                         const Output odd =
                             ops::Equal(b, ops::FloorMod(b, v[0], int64_t{2}), int64_t{1});
                         const Output h = ops::Cond(
                             b, odd, {v[1], w},
                             [](const Scope& t, const std::vector<Output>& x) {
                               return std::vector<Output>{ops::Mul(t, x[0], x[1])};
                             },
                             [](const Scope& f, const std::vector<Output>& x) {
                               return std::vector<Output>{ops::Sin(f, x[0])};
                             })[0];
                         return std::vector<Output>{ops::Add(b, v[0], int64_t{1}), h};
                       },
                       {ops::Const(s, int64_t{0}), in[0]})[1];
                 },
                 {RandomTensor({3}, 301), RandomTensor({3}, 302, 0.5, 1.5)});
}

TEST_CASE("the gradient of a loop with a loop inside a cond in its body is refused naming it") {
  // In the iterations whose cond takes the power side, the inner loop runs:
  // its gradient's counter and stacks would run in every one.
  Scope root = Scope::NewRootScope(testing::AllOps());
  const Output x = ops::Placeholder(root, DType::kFloat64, PartialShape({3}));
  const Output y = ops::WhileLoop(
      root,
      [](const Scope& c, const std::vector<Output>& v) { return ops::Less(c, v[0], int64_t{4}); },
      [](const Scope& b, const std::vector<Output>& v) {
        const Output odd = ops::Equal(b, ops::FloorMod(b, v[0], int64_t{2}), int64_t{1});
        const Output h = ops::Cond(
            b, odd, {v[1]},
            [](const Scope& t, const std::vector<Output>& in) {
              return std::vector<Output>{Power(t, in[0], 2)};
            },
            [](const Scope& f, const std::vector<Output>& in) {
              return std::vector<Output>{ops::Sin(f, in[0])};
            })[0];
        return std::vector<Output>{ops::Add(b, v[0], int64_t{1}), h};
      },
      {ops::Const(root, int64_t{0}), x})[1];
  REQUIRE(root.ok());
  auto g = AddGradients(root, {y}, {x});
  REQUIRE(g.status().code() == Code::kInvalidArgument);
  CHECK_THAT(g.status().message(), Catch::Contains("inside a cond"));
  CHECK_THAT(g.status().message(), Catch::Contains("Enter"));
}

TEST_CASE("three loops deep: the gradient of each level matches finite differences") {
  // x * w**(2*2*2), the middle loop nested in the outer and the inner in it.
  CheckGradients("three deep",
                 [](const Scope& s, const std::vector<Output>& in) {
                   const Output w = in[1];
                   return ops::WhileLoop(
                       s,
                       [](const Scope& c, const std::vector<Output>& v) {
                         return ops::Less(c, v[0], int64_t{2});
                       },
                       [w](const Scope& b, const std::vector<Output>& v) {
                         return std::vector<Output>{ops::Add(b, v[0], int64_t{1}),
                                                    NestedPower(b, v[1], w, 2, 2)};
                       },
                       {ops::Const(s, int64_t{0}), in[0]})[1];
                 },
                 {RandomTensor({3}, 91), RandomTensor({3}, 92, 0.8, 1.1)});
}

TEST_CASE(
    "a body that reads a variable afresh in every iteration gives the variable its gradient") {
  // p <- p * w, 3 times, w read through its reference (a RefEnter) in the
  // body: d(w^3)/dw = 3 w^2.
  testing::ApiEnv env;
  const Scope root = env.Root();
  Variable w(root.WithOpName("w"), {}, DType::kFloat64, Initializer::Constant(1.5));
  const Output ref = w.ref();
  const Output p = ops::WhileLoop(
      root,
      [](const Scope& c, const std::vector<Output>& v) { return ops::Less(c, v[0], int64_t{3}); },
      [ref](const Scope& b, const std::vector<Output>& v) {
        return std::vector<Output>{ops::Add(b, v[0], int64_t{1}),
                                   ops::Mul(b, v[1], ops::Identity(b, ref))};
      },
      {ops::Const(root, int64_t{0}), ops::Const(root, 1.0)})[1];
  auto dw = AddGradients(root, {p}, {ref});
  INFO(root.status().ToString());
  REQUIRE(dw.ok());
  ops::GlobalVariablesInitializer(root);
  auto session = env.Session(root);
  REQUIRE(session->Run({}, {}, {"init"}).ok());
  auto out = session->Run({}, {p.name(), (*dw)[0].name()}, {});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK(out->fetches[0].scalar<double>() == Approx(3.375));
  CHECK(out->fetches[1].scalar<double>() == Approx(6.75));
}

}  // namespace
}  // namespace tfd
