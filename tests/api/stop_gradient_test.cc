// StopGradient and PreventGradient: identities forward; backward, the first
// cuts the path (what it reads gets no gradient through it) and the second
// makes building the gradient an error naming the node.
#include <catch2/catch.hpp>

#include "common/gradients.h"
#include "tests/api/api_test_util.h"

namespace tfd {
namespace {

using testing::ApiEnv;

TEST_CASE("StopGradient passes its input forward and no gradient back") {
  ApiEnv env;
  const Scope root = env.Root();
  const Output x = ops::Placeholder(root.WithOpName("x"), DType::kFloat64, {2});
  // y = x * x + StopGradient(x * 5): dy/dx = 2x, the stopped path adds nothing.
  const Output stopped = ops::StopGradient(root.WithOpName("stop"), ops::Mul(root, x, 5.0));
  const Output y = ops::Sum(root, ops::Add(root, ops::Mul(root, x, x), stopped), 0);
  auto g = AddGradients(root, {y}, {x});
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  REQUIRE((*g)[0].valid());
  auto out = env.Run(root, {{"x", Tensor::FromVector<double>({1.5, -2})}},
                     {"stop", y.name(), (*g)[0].name()});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK((*out)[0].data<double>()[0] == 7.5);  // forward: x * 5 unchanged
  CHECK((*out)[0].data<double>()[1] == -10);
  CHECK((*out)[1].data<double>()[0] == 2.25 + 4 + 7.5 - 10);
  CHECK((*out)[2].data<double>()[0] == 3);  // 2x only
  CHECK((*out)[2].data<double>()[1] == -4);

  // An x reached only through StopGradient gets no gradient at all.
  auto none = AddGradients(root, {ops::Sum(root, stopped, 0)}, {x});
  REQUIRE(none.ok());
  CHECK(!(*none)[0].valid());
}

TEST_CASE("differentiating through PreventGradient is INVALID_ARGUMENT naming the node") {
  ApiEnv env;
  const Scope root = env.Root();
  const Output x = ops::Placeholder(root.WithOpName("x"), DType::kFloat64, {2});
  const Output p = ops::PreventGradient(root.WithOpName("guard"), x, "second derivative of xent");
  const Output y = ops::Sum(root, ops::Square(root, p), 0);
  auto out = env.Run(root, {{"x", Tensor::FromVector<double>({3, 4})}}, {y.name()});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK((*out)[0].data<double>()[0] == 25);  // forward is the identity

  auto g = AddGradients(root, {y}, {x});
  INFO(g.status().ToString());
  REQUIRE(!g.ok());
  CHECK(g.status().code() == Code::kInvalidArgument);
  CHECK(g.status().message().find("'guard'") != std::string::npos);
  CHECK(g.status().message().find("second derivative of xent") != std::string::npos);
}

}  // namespace
}  // namespace tfd
