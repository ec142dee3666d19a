// The gradient machinery (common/gradients.h) apart from any one op:
// pruning, stopping at xs, variables as xs, grad_ys, and its errors.
#include "common/gradients.h"

#include <catch2/catch.hpp>
#include <cmath>

#include "api/ops.h"
#include "api/variables.h"
#include "tests/api/api_test_util.h"

namespace tfd {
namespace {

using testing::ApiEnv;

double Fetch(ApiEnv& env, const Scope& root, const LocalSession::Feeds& feeds,
             const Output& t, const std::vector<std::string>& targets = {}) {
  auto out = env.Run(root, feeds, {t.name()}, targets);
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  return (*out)[0].data<double>()[0];
}

TEST_CASE("an x the ys do not depend on gets no gradient; nodes off the path are ignored") {
  ApiEnv env;
  const Scope root = env.Root();
  const Output x = ops::Placeholder(root.WithOpName("x"), DType::kFloat64, {});
  const Output unused = ops::Placeholder(root.WithOpName("unused"), DType::kFloat64, {});
  // RandomShuffle has no gradient, but it lies on no path from x to y.
  const Output noise =
      root.AddOperation("RandomShuffle", {ops::Const(root, {1.0, 2.0})}).output(0);
  const Output y = ops::Add(root, ops::Mul(root, x, 3.0), ops::Sum(root, noise, 0));
  auto g = AddGradients(root, {y}, {x, unused});
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  REQUIRE(g->size() == 2);
  CHECK((*g)[0].valid());
  CHECK(!(*g)[1].valid());
  CHECK((*g)[0].node.rfind("gradients/", 0) == 0);
  CHECK(Fetch(env, root, {{"x", Tensor::Scalar<double>(2)}}, (*g)[0]) == 3.0);
}

TEST_CASE("an op without a gradient on the path is NOT_FOUND naming it") {
  const Scope root = Scope::NewRootScope(testing::AllOps());
  const Output x = ops::Placeholder(root.WithOpName("x"), DType::kFloat64, {3});
  const Output shuffled =
      root.WithOpName("shuffle").AddOperation("RandomShuffle", {x}).output(0);
  auto g = AddGradients(root, {ops::Sum(root, shuffled, 0)}, {x});
  REQUIRE(!g.ok());
  CHECK(g.status().code() == Code::kNotFound);
  CHECK(g.status().message().find("RandomShuffle") != std::string::npos);
  CHECK(g.status().message().find("'shuffle'") != std::string::npos);
}

TEST_CASE("ys and xs must be valid floating tensors; grad_ys must match ys") {
  const Scope root = Scope::NewRootScope(testing::AllOps());
  const Output x = ops::Placeholder(root, DType::kFloat64, {2});
  const Output n = ops::Placeholder(root, DType::kInt32, {2});
  auto bad_y = AddGradients(root, {n}, {x});
  REQUIRE(!bad_y.ok());
  CHECK(bad_y.status().code() == Code::kInvalidArgument);
  CHECK(bad_y.status().message().find("int32") != std::string::npos);
  auto bad_x = AddGradients(root, {x}, {Output()});
  CHECK(bad_x.status().code() == Code::kInvalidArgument);
  auto bad_seed = AddGradients(root, {x}, {x}, {x, x});
  CHECK(bad_seed.status().code() == Code::kInvalidArgument);
}

TEST_CASE("grad_ys scales the gradient; y == x gives the seed itself") {
  ApiEnv env;
  const Scope root = env.Root();
  const Output x = ops::Placeholder(root.WithOpName("x"), DType::kFloat64, {});
  const Output y = ops::Square(root, x);
  auto g = AddGradients(root, {y, x}, {x}, {ops::Const(root, 10.0), ops::Const(root, 1.0)});
  REQUIRE(g.ok());
  // 10 * 2x + 1 at x = 3.
  CHECK(Fetch(env, root, {{"x", Tensor::Scalar<double>(3)}}, (*g)[0]) == 61.0);
}

TEST_CASE("the gradient for a variable is that of the value read from it") {
  ApiEnv env;
  const Scope root = env.Root();
  ops::Variable w(root.WithOpName("w"), {2}, DType::kFloat64,
                  ops::Initializer::Value(Tensor::FromVector<double>({1, 2})));
  // y = sum(w * w) + sum(w): once through the read snapshot, once reading
  // the reference directly.
  const Output direct = ops::Sum(root, ops::Identity(root, w.ref()), 0);
  const Output y = ops::Add(root, ops::Sum(root, ops::Mul(root, w, w), 0), direct);
  auto g = AddGradients(root, {y}, {w.ref()});
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  ops::GlobalVariablesInitializer(root);
  auto session = env.Session(root);
  REQUIRE(session->Run({}, {}, {"init"}).ok());
  auto out = session->Run({}, {(*g)[0].name()}, {});
  REQUIRE(out.ok());
  CHECK(TensorsEqual(out->fetches[0], Tensor::FromVector<double>({3, 5})));
}

TEST_CASE("gradients through a chain take each intermediate once") {
  // y = exp(x)^2 through two paths sharing exp(x): dy/dx = 2 exp(2x).
  ApiEnv env;
  const Scope root = env.Root();
  const Output x = ops::Placeholder(root.WithOpName("x"), DType::kFloat64, {});
  const Output e = ops::Exp(root, x);
  auto g = AddGradients(root, {ops::Mul(root, e, e)}, {x, e});
  REQUIRE(g.ok());
  const double at = 0.5;
  CHECK(Fetch(env, root, {{"x", Tensor::Scalar<double>(at)}}, (*g)[0]) ==
        Approx(2 * std::exp(2 * at)));
  CHECK(Fetch(env, root, {{"x", Tensor::Scalar<double>(at)}}, (*g)[1]) ==
        Approx(2 * std::exp(at)));
}

}  // namespace
}  // namespace tfd
