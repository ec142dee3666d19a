// Optimizers train: each minimises a small regression problem, moves
// global_step once per step, and updates exactly as its formula says.
#include "api/optimizers.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <memory>

#include "tests/api/api_test_util.h"

namespace tfd {
namespace {

using ops::Initializer;
using ops::Variable;
using testing::ApiEnv;

// Fits y = 3x - 2 on eight points with w and b; returns the final loss.
double FitLine(const train::Optimizer& opt, int steps, int64_t* global_step) {
  ApiEnv env;
  const Scope root = env.Root();
  const std::vector<float> xs{-1, -0.5, 0, 0.5, 1, 1.5, 2, 2.5};
  std::vector<float> ys;
  for (float x : xs) ys.push_back(3 * x - 2);
  const Output x = ops::Const(root, Tensor::FromVector<float>(xs, TensorShape{8, 1}));
  const Output y = ops::Const(root, Tensor::FromVector<float>(ys, TensorShape{8, 1}));
  Variable step = ops::GlobalStep(root);
  Variable w(root.WithOpName("w"), {1, 1}, DType::kFloat32, Initializer::RandomNormal(0.5, 3));
  Variable b(root.WithOpName("b"), {1}, DType::kFloat32, Initializer::Zeros());
  const Output err = ops::Sub(root, ops::Add(root, ops::MatMul(root, x, w), b), y);
  ops::Mean(root.WithOpName("loss"), ops::Square(root, err), {0, 1});
  opt.Minimize(root.WithOpName("train"), root.OutputOf("loss", 0), step);
  ops::GlobalVariablesInitializer(root);
  INFO(opt.name() << ": " << root.status().ToString());
  REQUIRE(root.ok());

  auto session = env.Session(root);
  REQUIRE(session->Run({}, {}, {"init"}).ok());
  for (int i = 0; i < steps; ++i) {
    const Status s = session->Run({}, {}, {"train"}).status();
    INFO(s.ToString());
    REQUIRE(s.ok());
  }
  auto out = session->Run({}, {"loss", "global_step/read"}, {});
  REQUIRE(out.ok());
  *global_step = out->fetches[1].scalar<int64_t>();
  return out->fetches[0].scalar<float>();
}

TEST_CASE("GradientDescent, Momentum and Adam fit a line and count steps") {
  struct Case {
    std::unique_ptr<train::Optimizer> opt;
    int steps;
  };
  Case cases[3];
  cases[0] = {std::make_unique<train::GradientDescent>(0.1), 300};
  cases[1] = {std::make_unique<train::Momentum>(0.05, 0.9), 300};
  cases[2] = {std::make_unique<train::Adam>(0.1), 400};
  for (const Case& c : cases) {
    int64_t step = -1;
    const double loss = FitLine(*c.opt, c.steps, &step);
    INFO(c.opt->name() << " loss " << loss);
    CHECK(loss < 1e-3);
    CHECK(step == c.steps);
  }
}

// One step on loss = sum(v^2) from v = 1 (gradient 2), run twice.
std::vector<double> TwoSteps(const train::Optimizer& opt) {
  ApiEnv env;
  const Scope root = env.Root();
  Variable v(root.WithOpName("v"), {1}, DType::kFloat64, Initializer::Ones());
  opt.Minimize(root.WithOpName("train"), ops::Sum(root, ops::Square(root, v), 0));
  ops::GlobalVariablesInitializer(root);
  auto session = env.Session(root);
  REQUIRE(session->Run({}, {}, {"init"}).ok());
  std::vector<double> values;
  for (int i = 0; i < 2; ++i) {
    REQUIRE(session->Run({}, {}, {"train"}).ok());
    auto out = session->Run({}, {"v/read"}, {});
    REQUIRE(out.ok());
    values.push_back(out->fetches[0].data<double>()[0]);
  }
  return values;
}

TEST_CASE("each optimizer's update follows its formula") {
  // GD: v -= 0.1 * 2v.
  auto gd = TwoSteps(train::GradientDescent(0.1));
  CHECK(gd[0] == Approx(0.8));
  CHECK(gd[1] == Approx(0.64));
  // Momentum: a = 0.9 a + g; v -= 0.1 a. g1 = 2, a1 = 2, v1 = 0.8;
  // g2 = 1.6, a2 = 3.4, v2 = 0.46.
  auto mom = TwoSteps(train::Momentum(0.1, 0.9));
  CHECK(mom[0] == Approx(0.8));
  CHECK(mom[1] == Approx(0.46));
  // Adam's first step moves by lr (times sign) whatever the gradient's size;
  // the second uses beta powers advanced once.
  auto adam = TwoSteps(train::Adam(0.01, 0.9, 0.999, 1e-8));
  CHECK(adam[0] == Approx(0.99));
  const double g1 = 2, g2 = 2 * 0.99;
  const double m2 = 0.9 * 0.1 * g1 + 0.1 * g2;
  const double v2 = 0.999 * 0.001 * g1 * g1 + 0.001 * g2 * g2;
  const double lr2 = 0.01 * std::sqrt(1 - 0.999 * 0.999) / (1 - 0.9 * 0.9);
  CHECK(adam[1] == Approx(0.99 - lr2 * m2 / (std::sqrt(v2) + 1e-8)));
}

// A tensor learning rate: a float32 placeholder fed 0.1, read by the
// float64 variable's update as float64 (0.1f, cast); the number 0.1 is the
// float64 one. And Adam's beta powers, made in the first variable's dtype
// (float32 here), are read cast by a float64 variable's update.
TEST_CASE("a tensor learning rate is fed, cast to each variable's dtype, and must be a scalar") {
  ApiEnv env;
  const Scope root = env.Root();
  const Output lr = ops::Placeholder(root.WithOpName("lr"), DType::kFloat32, PartialShape({}));
  Variable f(root.WithOpName("f"), {1}, DType::kFloat32, Initializer::Ones());
  Variable d(root.WithOpName("d"), {1}, DType::kFloat64, Initializer::Ones());
  const Output loss =
      ops::Add(root, ops::Sum(root, ops::Square(root, f), 0),
               ops::Cast(root, ops::Sum(root, ops::Square(root, d), 0), DType::kFloat32));
  train::GradientDescent(lr).Minimize(root.WithOpName("gd"), loss);
  train::Adam(lr).Minimize(root.WithOpName("adam"), loss);
  ops::GlobalVariablesInitializer(root);
  INFO(root.status().ToString());
  REQUIRE(root.ok());
  auto session = env.Session(root);
  REQUIRE(session->Run({}, {}, {"init"}).ok());
  const auto fed = Tensor::Scalar<float>(0.1f);
  auto run = session->Run({{"lr", fed}}, {}, {"gd"});
  INFO(run.status().ToString());
  REQUIRE(run.ok());
  auto out = session->Run({}, {"f/read", "d/read"}, {});
  REQUIRE(out.ok());
  CHECK(out->fetches[0].data<float>()[0] == 1.0f - 0.1f * 2.0f);
  CHECK(out->fetches[1].data<double>()[0] == 1.0 - static_cast<double>(0.1f) * 2.0);
  // Adam's first step moves each variable by the rate: 0.1f, as its dtype.
  REQUIRE(session->Run({{"lr", fed}}, {}, {"adam"}).ok());
  out = session->Run({}, {"d/read"}, {});
  REQUIRE(out.ok());
  CHECK(out->fetches[0].data<double>()[0] ==
        Approx(1.0 - 0.2 - static_cast<double>(0.1f)).epsilon(1e-6));

  const Scope other = Scope::NewRootScope(testing::AllOps());
  Variable v(other.WithOpName("v"), {1}, DType::kFloat32, Initializer::Ones());
  train::GradientDescent(ops::Const(other, {0.1f, 0.2f}))
      .Minimize(other, ops::Sum(other, ops::Square(other, v), 0));
  CHECK(other.status().code() == Code::kInvalidArgument);
  CHECK(other.status().message().find("must be a floating-point scalar, got float32[2]") !=
        std::string::npos);
}

TEST_CASE("minimizing a loss that depends on no variable is an error of the scope") {
  const Scope root = Scope::NewRootScope(testing::AllOps());
  Variable v(root.WithOpName("v"), {1}, DType::kFloat32, Initializer::Ones());
  const Output loss = ops::Sum(root, ops::Const(root, {1.0f, 2.0f}), 0);
  const Operation train = train::GradientDescent(0.1).Minimize(root, loss);
  CHECK(!train.valid());
  CHECK(root.status().code() == Code::kInvalidArgument);
  CHECK(root.status().message().find("[v]") != std::string::npos);
}

}  // namespace
}  // namespace tfd
