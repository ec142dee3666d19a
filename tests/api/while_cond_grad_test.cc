// Gradients of while loops whose body holds a cond (kernels/control/
// while_grad.h, cond_guards.h): a value on one side of the cond exists only
// in the iterations that took that side, so the gradient must save and
// replay it in those alone. Each is checked against float64 central
// differences (CheckGradients), the first also against its closed form:
// sides alternating, sides taken irregularly and each side reading values of
// its own, sides never taken, a predicate from outside the loop, a cond in
// a cond's branch, a cond in the inner loop of a nested pair, a trip count
// that depends on the data, iterations in parallel or not; a Merge that
// joins no cond's two sides, refused.
#include <catch2/catch.hpp>

#include <cmath>

#include "api/control_flow.h"
#include "common/gradients.h"
#include "tests/api/api_test_util.h"

namespace tfd {
namespace {

using testing::CheckGradients;
using testing::RandomTensor;

using Pattern = std::function<Output(const Scope& s, const Output& i)>;

// (i, x) = (0, x0); while i < n: (i + 1, cond(pattern(i), x * a, x + a)).
Output MulOrAdd(const Scope& s, const Output& x0, const Output& a, int64_t n,
                const Pattern& pattern, ops::WhileOptions options = {}) {
  return ops::WhileLoop(
      s, [n](const Scope& c, const std::vector<Output>& v) { return ops::Less(c, v[0], n); },
      [a, pattern](const Scope& b, const std::vector<Output>& v) {
        const Output x = ops::Cond(
            b, pattern(b, v[0]), {v[1], a},
            [](const Scope& t, const std::vector<Output>& in) {
              return std::vector<Output>{ops::Mul(t, in[0], in[1])};
            },
            [](const Scope& f, const std::vector<Output>& in) {
              return std::vector<Output>{ops::Add(f, in[0], in[1])};
            })[0];
        return std::vector<Output>{ops::Add(b, v[0], int64_t{1}), x};
      },
      {ops::Const(s, int64_t{0}), x0}, options)[1];
}

Output Even(const Scope& s, const Output& i) {
  return ops::Equal(s, ops::FloorMod(s, i, int64_t{2}), int64_t{0});
}

TEST_CASE("x = cond(i % 2 == 0, x * a, x + a) six times: its gradient is the closed form's") {
  // x6 = x0 a^3 + a^3 + a^2 + a: d/dx0 = a^3, d/da = 3 x0 a^2 + 3 a^2 + 2 a + 1.
  testing::ApiEnv env;
  const Scope root = env.Root();
  const Output x0 = ops::Placeholder(root.WithOpName("x0"), DType::kFloat64, PartialShape({3}));
  const Output a = ops::Placeholder(root.WithOpName("a"), DType::kFloat64, PartialShape({3}));
  const Output y = MulOrAdd(root, x0, a, 6, Even);
  auto g = AddGradients(root, {ops::Sum(root, y, 0)}, {x0, a});
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  const std::vector<double> xs{0.5, -1.25, 2.0}, as{1.5, -0.75, 0.3};
  auto out = env.Run(root,
                     {{"x0", Tensor::FromVector<double>(xs, TensorShape{3})},
                      {"a", Tensor::FromVector<double>(as, TensorShape{3})}},
                     {y.name(), (*g)[0].name(), (*g)[1].name()});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  for (const Tensor& t : *out) REQUIRE(t.shape() == TensorShape{3});
  for (int k = 0; k < 3; ++k) {
    const double x = xs[k], v = as[k];
    CHECK((*out)[0].data<double>()[k] == Approx(x * v * v * v + v * v * v + v * v + v));
    CHECK((*out)[1].data<double>()[k] == Approx(v * v * v));
    CHECK((*out)[2].data<double>()[k] == Approx(3 * x * v * v + 3 * v * v + 2 * v + 1));
  }
  CheckGradients("x = cond(i even, x * a, x + a)",
                 [](const Scope& s, const std::vector<Output>& in) {
                   return MulOrAdd(s, in[0], in[1], 6, Even);
                 },
                 {RandomTensor({2, 3}, 111), RandomTensor({2, 3}, 112, 0.5, 1.5)});
}

// (i, h) = (0, h0); while i < n: (i + 1, cond(pattern(i), tanh(h w), sin(h) w)):
// the gradient of the true side reads its tanh, that of the false side its
// sin, each computed only in the iterations that took its side.
Output TanhOrSin(const Scope& s, const Output& h0, const Output& w, int64_t n,
                 const Pattern& pattern) {
  return ops::WhileLoop(
      s, [n](const Scope& c, const std::vector<Output>& v) { return ops::Less(c, v[0], n); },
      [w, pattern](const Scope& b, const std::vector<Output>& v) {
        const Output h = ops::Cond(
            b, pattern(b, v[0]), {v[1], w},
            [](const Scope& t, const std::vector<Output>& in) {
              return std::vector<Output>{ops::Tanh(t, ops::Mul(t, in[0], in[1]))};
            },
            [](const Scope& f, const std::vector<Output>& in) {
              return std::vector<Output>{ops::Mul(f, ops::Sin(f, in[0]), in[1])};
            })[0];
        return std::vector<Output>{ops::Add(b, v[0], int64_t{1}), h};
      },
      {ops::Const(s, int64_t{0}), h0})[1];
}

TEST_CASE("each side of a cond in a loop saves its own values only in the iterations it runs") {
  const std::vector<std::pair<std::string, Pattern>> patterns{
      // true in iterations 0, 3 and 6 of 7: the sides' stacks differ in depth.
      {"irregular",
       [](const Scope& s, const Output& i) {
         return ops::Less(s, ops::FloorMod(s, ops::Mul(s, i, int64_t{5}), int64_t{7}),
                          int64_t{3});
       }},
      {"always true",
       [](const Scope& s, const Output& i) { return ops::GreaterEqual(s, i, int64_t{0}); }},
      {"never true", [](const Scope& s, const Output& i) { return ops::Less(s, i, int64_t{0}); }},
  };
  for (const auto& [name, pattern] : patterns) {
    CheckGradients("tanh or sin, " + name,
                   [pattern = pattern](const Scope& s, const std::vector<Output>& in) {
                     return TanhOrSin(s, in[0], in[1], 7, pattern);
                   },
                   {RandomTensor({4}, 121), RandomTensor({4}, 122, 0.5, 1.2)});
  }
}

TEST_CASE("a cond on a predicate from outside the loop takes the same side in every iteration") {
  // A training switch, say: the loop reads it as an invariant, never stacked.
  for (bool take : {true, false}) {
    CheckGradients(take ? "invariant predicate, true" : "invariant predicate, false",
                   [take](const Scope& s, const std::vector<Output>& in) {
                     const Output pred = ops::Const(s, take);
                     return MulOrAdd(s, in[0], in[1], 4,
                                     [pred](const Scope&, const Output&) { return pred; });
                   },
                   {RandomTensor({3}, 161), RandomTensor({3}, 162, 0.5, 1.5)});
  }
}

TEST_CASE("a cond in the inner loop of a nested pair differentiates") {
  // Outer: 3 times h <- inner(h) + h; inner: 3 times
  // u <- cond((i + j) odd, tanh(u w), sin(u) + w), the true side's tanh
  // saved in the inner iterations that took it, across outer iterations.
  CheckGradients(
      "cond in inner loop",
      [](const Scope& s, const std::vector<Output>& in) {
        const Output w = in[1];
        return ops::WhileLoop(
            s,
            [](const Scope& c, const std::vector<Output>& v) {
              return ops::Less(c, v[0], int64_t{3});
            },
            [w](const Scope& b, const std::vector<Output>& v) {
              const Output i = v[0];
              const Output inner = ops::WhileLoop(
                  b,
                  [](const Scope& c, const std::vector<Output>& u) {
                    return ops::Less(c, u[0], int64_t{3});
                  },
                  [w, i](const Scope& bb, const std::vector<Output>& u) {
                    const Output odd = ops::Equal(
                        bb, ops::FloorMod(bb, ops::Add(bb, u[0], i), int64_t{2}), int64_t{1});
                    const Output next = ops::Cond(
                        bb, odd, {u[1], w},
                        [](const Scope& t, const std::vector<Output>& x) {
                          return std::vector<Output>{ops::Tanh(t, ops::Mul(t, x[0], x[1]))};
                        },
                        [](const Scope& f, const std::vector<Output>& x) {
                          return std::vector<Output>{ops::Add(f, ops::Sin(f, x[0]), x[1])};
                        })[0];
                    return std::vector<Output>{ops::Add(bb, u[0], int64_t{1}), next};
                  },
                  {ops::Const(b, int64_t{0}), v[1]})[1];
              return std::vector<Output>{ops::Add(b, i, int64_t{1}), ops::Add(b, inner, v[1])};
            },
            {ops::Const(s, int64_t{0}), in[0]})[1];
      },
      {RandomTensor({3}, 131, -0.5, 0.5), RandomTensor({3}, 132, 0.3, 0.6)});
}

TEST_CASE("a cond in a loop whose trip count depends on the data, in parallel or not") {
  // As many iterations as h0 has elements; the cond takes its true side in
  // every third iteration.
  for (int parallel : {1, 10}) {
    CheckGradients("data-dependent trips, parallel_iterations " + std::to_string(parallel),
                   [parallel](const Scope& s, const std::vector<Output>& in) {
                     const Output trips = ops::Cast(s, ops::Size(s, in[0]), DType::kInt64);
                     return ops::WhileLoop(
                         s,
                         [trips](const Scope& c, const std::vector<Output>& v) {
                           return ops::Less(c, v[0], trips);
                         },
                         [w = in[1]](const Scope& b, const std::vector<Output>& v) {
                           const Output third = ops::Equal(
                               b, ops::FloorMod(b, v[0], int64_t{3}), int64_t{0});
                           const Output h = ops::Cond(
                               b, third, {v[1], w},
                               [](const Scope& t, const std::vector<Output>& x) {
                                 return std::vector<Output>{ops::Tanh(t, ops::Mul(t, x[0], x[1]))};
                               },
                               [](const Scope& f, const std::vector<Output>& x) {
                                 return std::vector<Output>{ops::Sub(f, ops::Exp(f, x[0]), x[1])};
                               })[0];
                           return std::vector<Output>{ops::Add(b, v[0], int64_t{1}),
                                                      ops::Mul(b, h, 0.5)};
                         },
                         {ops::Const(s, int64_t{0}), in[0]}, {.parallel_iterations = parallel})[1];
                   },
                   {RandomTensor({5}, 141, -0.5, 0.5), RandomTensor({5}, 142, 0.5, 1.0)});
  }
}

TEST_CASE("a cond inside a cond's branch in a loop differentiates") {
  // x <- cond(i even, cond(i % 3 == 0, x a, sin(x) a), x + a), 7 times: the
  // inner cond's predicate exists only in the even iterations.
  CheckGradients(
      "nested conds",
      [](const Scope& s, const std::vector<Output>& in) {
        const Output a = in[1];
        return ops::WhileLoop(
            s,
            [](const Scope& c, const std::vector<Output>& v) {
              return ops::Less(c, v[0], int64_t{7});
            },
            [a](const Scope& b, const std::vector<Output>& v) {
              auto inner = [](const Scope& t, const std::vector<Output>& x) {
                const Output third =
                    ops::Equal(t, ops::FloorMod(t, x[2], int64_t{3}), int64_t{0});
                return ops::Cond(
                    t, third, {x[0], x[1]},
                    [](const Scope& tt, const std::vector<Output>& y) {
                      return std::vector<Output>{ops::Mul(tt, y[0], y[1])};
                    },
                    [](const Scope& tf, const std::vector<Output>& y) {
                      return std::vector<Output>{ops::Mul(tf, ops::Sin(tf, y[0]), y[1])};
                    });
              };
              const Output x = ops::Cond(
                  b, Even(b, v[0]), {v[1], a, v[0]}, inner,
                  [](const Scope& f, const std::vector<Output>& y) {
                    return std::vector<Output>{ops::Add(f, y[0], y[1])};
                  })[0];
              return std::vector<Output>{ops::Add(b, v[0], int64_t{1}), x};
            },
            {ops::Const(s, int64_t{0}), in[0]})[1];
      },
      {RandomTensor({3}, 151), RandomTensor({3}, 152, 0.5, 1.2)});
}

TEST_CASE("a Merge in a loop's body that joins no cond's two sides is refused naming it") {
  // Built by hand: the Merge's inputs are sides of two different predicates,
  // so which iterations computed what follows it is unknown.
  Scope root = Scope::NewRootScope(testing::AllOps());
  const Output x = ops::Placeholder(root, DType::kFloat64, PartialShape({3}));
  const Output y = ops::WhileLoop(
      root,
      [](const Scope& c, const std::vector<Output>& v) { return ops::Less(c, v[0], int64_t{4}); },
      [](const Scope& b, const std::vector<Output>& v) {
        Operation first = b.AddOperation("Switch", {v[1], ops::Less(b, v[0], int64_t{2})});
        Operation second = b.AddOperation("Switch", {v[1], ops::Less(b, v[0], int64_t{3})});
        const Output h = b.WithOpName("odd_merge")
                             .AddOperation("Merge", {ops::Mul(b, first.output(1), 2.0),
                                                     ops::Sin(b, second.output(0))})
                             .output(0);
        return std::vector<Output>{ops::Add(b, v[0], int64_t{1}), h};
      },
      {ops::Const(root, int64_t{0}), x})[1];
  REQUIRE(root.ok());
  auto g = AddGradients(root, {y}, {x});
  REQUIRE(g.status().code() == Code::kInvalidArgument);
  CHECK_THAT(g.status().message(), Catch::Contains("odd_merge"));
}

}  // namespace
}  // namespace tfd
