// Activations and their gradient kernels: forward values against naive
// float64 formulas, gradients against central differences of the forward op.
#include <algorithm>
#include <cmath>
#include <functional>

#include "tests/kernels/nn/nn_test_util.h"

namespace tfd::testing::nn {
namespace {

struct ForwardCase {
  const char* op;
  std::function<double(double)> ref;
};

const std::vector<ForwardCase>& ForwardCases() {
  static const std::vector<ForwardCase> cases = {
      {"Sigmoid", [](double x) { return 1 / (1 + std::exp(-x)); }},
      {"Tanh", [](double x) { return std::tanh(x); }},
      {"Relu", [](double x) { return x > 0 ? x : 0; }},
      {"Relu6", [](double x) { return std::min(std::max(x, 0.0), 6.0); }},
      {"Elu", [](double x) { return x < 0 ? std::exp(x) - 1 : x; }},
      {"Softplus", [](double x) { return std::log(1 + std::exp(x)); }},
      {"LeakyRelu", [](double x) { return x > 0 ? x : 0.2 * x; }},  // the default alpha
      {"Selu",
       [](double x) {
         return 1.0507009873554804934 * (x < 0 ? 1.6732632423543772848 * std::expm1(x) : x);
       }},
  };
  return cases;
}

// Points on both sides of every kink (0 for Relu, Elu; 6 for Relu6), none
// within a finite-difference step of one.
const std::vector<double> kPoints = {-7.5, -2.3, -0.7, -0.1, 0.05, 0.4,
                                     1.3,  3.7,  5.9,  6.3,  9.0,  12.0};

TEST_CASE("activations match float64 references in float32 and float64") {
  for (const ForwardCase& c : ForwardCases()) {
    for (DType t : {DType::kFloat32, DType::kFloat64}) {
      INFO(c.op << " " << DTypeName(t));
      std::vector<double> want;
      for (double x : kPoints) want.push_back(c.ref(x));
      const TensorShape shape({3, 4});
      auto out = MustRun(c.op, TypeAttr(t), {Make(t, kPoints, shape)});
      REQUIRE(out[0].dtype() == t);
      CheckClose(out[0], shape, want, Tolerance(t), Tolerance(t));
    }
  }
}

TEST_CASE("activations take rank-0 and empty tensors") {
  for (const ForwardCase& c : ForwardCases()) {
    INFO(c.op);
    auto scalar = MustRun(c.op, TypeAttr(DType::kFloat64), {Tensor::Scalar<double>(-0.5)});
    CheckClose(scalar[0], TensorShape(), {c.ref(-0.5)}, 1e-12);
    auto empty = MustRun(c.op, TypeAttr(DType::kFloat32), {Make(DType::kFloat32, {}, {0, 3})});
    CHECK(empty[0].shape() == TensorShape({0, 3}));
  }
}

TEST_CASE("activations stay finite for inputs whose exp overflows float32") {
  const std::vector<double> x = {-1000, -100, 100, 1000};
  const TensorShape shape({4});
  auto run = [&](const char* op) {
    return MustRun(op, TypeAttr(DType::kFloat32), {Make(DType::kFloat32, x, shape)})[0];
  };
  CheckClose(run("Sigmoid"), shape, {0, 0, 1, 1}, 1e-30);
  CheckClose(run("Softplus"), shape, {0, 0, 100, 1000}, 1e-30, 1e-7);
  CheckClose(run("Elu"), shape, {-1, -1, 100, 1000}, 0);
  CheckClose(run("Tanh"), shape, {-1, -1, 1, 1}, 1e-6);
}

TEST_CASE("LeakyRelu and LeakyReluGrad scale the negative side by attr alpha") {
  const TensorShape shape({4});
  const std::vector<double> x = {-2, -0.5, 0.5, 3};
  for (double alpha : {0.01, 1.5}) {
    INFO("alpha " << alpha);
    AttrMap attrs = TypeAttr(DType::kFloat64);
    attrs["alpha"] = alpha;
    auto y = MustRun("LeakyRelu", attrs, {Doubles(x, shape)});
    CheckClose(y[0], shape, {-2 * alpha, -0.5 * alpha, 0.5, 3}, 1e-15);
    const Tensor dy = Doubles({1, 2, 3, 4}, shape);
    auto dx = MustRun("LeakyReluGrad", attrs, {dy, Doubles(x, shape)});
    CheckClose(dx[0], shape, {alpha, 2 * alpha, 3, 4}, 1e-15);
    Status s = CheckGradient(OpFunction("LeakyRelu", attrs), {Doubles(x, shape)}, 0, dy, dx[0]);
    INFO(s.message());
    CHECK(s.ok());
  }
}

// How each gradient kernel is fed: its inputs in TensorFlow's order.
enum class GradInputs {
  kYThenDy,         // SigmoidGrad, TanhGrad: (forward output, upstream)
  kDyThenFeatures,  // ReluGrad, Relu6Grad, SoftplusGrad
  kDyThenOutputs,   // EluGrad
};

struct GradCase {
  const char* grad_op;
  const char* forward_op;
  GradInputs inputs;
};

const std::vector<GradCase> kGradCases = {
    {"SigmoidGrad", "Sigmoid", GradInputs::kYThenDy},
    {"TanhGrad", "Tanh", GradInputs::kYThenDy},
    {"ReluGrad", "Relu", GradInputs::kDyThenFeatures},
    {"Relu6Grad", "Relu6", GradInputs::kDyThenFeatures},
    {"EluGrad", "Elu", GradInputs::kDyThenOutputs},
    {"SoftplusGrad", "Softplus", GradInputs::kDyThenFeatures},
    {"LeakyReluGrad", "LeakyRelu", GradInputs::kDyThenFeatures},
    {"SeluGrad", "Selu", GradInputs::kDyThenOutputs},
};

std::vector<Tensor> GradKernelInputs(const GradCase& c, DType t, const Tensor& x,
                                     const Tensor& dy) {
  switch (c.inputs) {
    case GradInputs::kYThenDy:
      return {MustRun(c.forward_op, TypeAttr(t), {x})[0], dy};
    case GradInputs::kDyThenFeatures:
      return {dy, x};
    case GradInputs::kDyThenOutputs:
      return {dy, MustRun(c.forward_op, TypeAttr(t), {x})[0]};
  }
  return {};
}

TEST_CASE("activation gradient kernels match finite differences of their forward ops") {
  const TensorShape shape({3, 4});
  const Tensor x = Doubles(kPoints, shape);
  const Tensor dy = Doubles(Spread(12, -2, 2), shape);
  for (const GradCase& c : kGradCases) {
    INFO(c.grad_op);
    auto analytic =
        MustRun(c.grad_op, TypeAttr(DType::kFloat64), GradKernelInputs(c, DType::kFloat64, x, dy));
    REQUIRE(analytic[0].shape() == shape);
    Status s =
        CheckGradient(OpFunction(c.forward_op, TypeAttr(DType::kFloat64)), {x}, 0, dy, analytic[0]);
    INFO(s.message());
    CHECK(s.ok());
  }
}

TEST_CASE("activation gradient kernels agree in float32 and work on scalars and empties") {
  const TensorShape shape({12});
  const std::vector<double> dy_values = Spread(12, -2, 2, 7);
  for (const GradCase& c : kGradCases) {
    INFO(c.grad_op);
    auto want = MustRun(
        c.grad_op, TypeAttr(DType::kFloat64),
        GradKernelInputs(c, DType::kFloat64, Doubles(kPoints, shape), Doubles(dy_values, shape)));
    auto got = MustRun(c.grad_op, TypeAttr(DType::kFloat32),
                       GradKernelInputs(c, DType::kFloat32, Make(DType::kFloat32, kPoints, shape),
                                        Make(DType::kFloat32, dy_values, shape)));
    CheckClose(got[0], shape, Values(want[0]), 1e-5, 1e-5);

    auto scalar = MustRun(c.grad_op, TypeAttr(DType::kFloat64),
                          GradKernelInputs(c, DType::kFloat64, Tensor::Scalar<double>(0.3),
                                           Tensor::Scalar<double>(1.0)));
    CHECK(scalar[0].shape() == TensorShape());
    const Tensor empty = Doubles({}, {2, 0});
    auto none = MustRun(c.grad_op, TypeAttr(DType::kFloat64),
                        GradKernelInputs(c, DType::kFloat64, empty, empty));
    CHECK(none[0].shape() == TensorShape({2, 0}));
  }
}

TEST_CASE("ReluGrad passes nothing back at exactly zero, as TensorFlow does") {
  auto out = MustRun("ReluGrad", TypeAttr(DType::kFloat64),
                     {Doubles({5, 5, 5}, {3}), Doubles({-1, 0, 1}, {3})});
  CheckClose(out[0], TensorShape({3}), {0, 0, 5}, 0);
}

TEST_CASE("activation gradient kernels refuse inputs of different shapes") {
  auto out = RunOp(Registry(), "ReluGrad", TypeAttr(DType::kFloat32),
                   {Make(DType::kFloat32, {1, 2, 3}, {3}), Make(DType::kFloat32, {1, 2}, {2})});
  REQUIRE(out.status().code() == Code::kInvalidArgument);
  CHECK(out.status().message().find("gradients and features") != std::string::npos);
  CHECK(out.status().message().find("[3]") != std::string::npos);

  const OpRegistration* reg = Registry().Find("SigmoidGrad");
  REQUIRE(reg != nullptr);
  AttrMap attrs = TypeAttr(DType::kFloat32);
  InferenceContext c(attrs, {PartialShape({2, 3}), PartialShape({2, 4})},
                     {DType::kFloat32, DType::kFloat32}, {nullptr, nullptr}, 1);
  CHECK(reg->shape_fn(c).code() == Code::kInvalidArgument);
  InferenceContext partial(attrs, {PartialShape({-1, 3}), PartialShape({2, -1})},
                           {DType::kFloat32, DType::kFloat32}, {nullptr, nullptr}, 1);
  REQUIRE(reg->shape_fn(partial).ok());
  CHECK(partial.output(0) == PartialShape({2, 3}));
}

TEST_CASE("the gradient checker catches a wrong gradient") {
  const Tensor x = Doubles({0.5, 1.5}, {2});
  const Tensor dy = Doubles({1, 1}, {2});
  const Tensor wrong = Doubles({1, 1}, {2});  // d/dx tanh(x) is not 1 here
  Status s = CheckGradient(OpFunction("Tanh", TypeAttr(DType::kFloat64)), {x}, 0, dy, wrong);
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK(s.message().find("flat index 1") != std::string::npos);
}

}  // namespace
}  // namespace tfd::testing::nn
