// The broadcasting engine on its own: the collapsed plan, TensorFlow's
// gradient reduction axes, and ApplyBroadcast against the naive definition
// over a sweep of shape pairs.
#include "kernels/math/broadcast.h"

#include <catch2/catch.hpp>

#include "tests/kernels/math/math_test_util.h"

namespace tfd::kernels {
namespace {

using math_test::NaiveBroadcast;
using Dims = std::vector<int64_t>;

BroadcastPlan MustPlan(const Dims& x, const Dims& y) {
  auto p = BroadcastPlan::Make(TensorShape(x), TensorShape(y));
  INFO(p.status().ToString());
  REQUIRE(p.ok());
  return *p;
}

TEST_CASE("plans pick the fast path for equal shapes and one-element operands") {
  CHECK(MustPlan({2, 3}, {2, 3}).kind() == BroadcastPlan::Kind::kSameShape);
  CHECK(MustPlan({}, {2, 3}).kind() == BroadcastPlan::Kind::kScalarX);
  CHECK(MustPlan({1, 1}, {4}).kind() == BroadcastPlan::Kind::kScalarX);
  CHECK(MustPlan({2, 3}, {1}).kind() == BroadcastPlan::Kind::kScalarY);
  CHECK(MustPlan({2, 3}, {3}).kind() == BroadcastPlan::Kind::kGeneral);
  CHECK(MustPlan({1, 1}, {4}).output_shape() == TensorShape({1, 4}));
}

TEST_CASE("plans merge neighbouring dims broadcast the same way and drop size-1 dims") {
  // [2, 1, 4] vs [3, 1]: output [2, 3, 4]; x repeats along 3, y along 2 and 4.
  BroadcastPlan p = MustPlan({2, 1, 4}, {3, 1});
  CHECK(p.output_shape() == TensorShape({2, 3, 4}));
  CHECK(p.dims() == Dims{2, 3, 4});
  CHECK(p.x_strides() == Dims{4, 0, 1});
  CHECK(p.y_strides() == Dims{0, 1, 0});

  // [5, 6, 7] vs [7]: the two leading dims merge into one of 30.
  p = MustPlan({5, 6, 7}, {7});
  CHECK(p.dims() == Dims{30, 7});
  CHECK(p.x_strides() == Dims{7, 1});
  CHECK(p.y_strides() == Dims{0, 1});

  // [1, 4, 1, 3] vs [2, 1, 1, 3]: the size-1 dim vanishes.
  p = MustPlan({1, 4, 1, 3}, {2, 1, 1, 3});
  CHECK(p.output_shape() == TensorShape({2, 4, 1, 3}));
  CHECK(p.dims() == Dims{2, 4, 3});
  CHECK(p.x_strides() == Dims{0, 3, 1});
  CHECK(p.y_strides() == Dims{3, 0, 1});
}

TEST_CASE("gradient reduction axes follow TensorFlow's BroadcastGradientArgs") {
  BroadcastPlan p = MustPlan({2, 3}, {3});
  CHECK(p.x_reduce_axes().empty());
  CHECK(p.y_reduce_axes() == Dims{0});

  p = MustPlan({2, 1}, {1, 3});
  CHECK(p.x_reduce_axes() == Dims{1});
  CHECK(p.y_reduce_axes() == Dims{0});

  p = MustPlan({}, {2, 3});
  CHECK(p.x_reduce_axes() == Dims{0, 1});
  CHECK(p.y_reduce_axes().empty());

  // Axes of size 1 on both sides are listed for both, unless the shapes are equal.
  p = MustPlan({1, 3}, {1, 1});
  CHECK(p.x_reduce_axes() == Dims{0});
  CHECK(p.y_reduce_axes() == Dims{0, 1});
  p = MustPlan({1, 3}, {1, 3});
  CHECK(p.x_reduce_axes().empty());
  CHECK(p.y_reduce_axes().empty());
}

TEST_CASE("incompatible shapes are refused naming both") {
  auto p = BroadcastPlan::Make(TensorShape({2, 3}), TensorShape({4}));
  REQUIRE(p.status().code() == Code::kInvalidArgument);
  CHECK(p.status().message().find("[2, 3]") != std::string::npos);
  CHECK(p.status().message().find("[4]") != std::string::npos);
  // 0 broadcasts only against 0 or 1.
  CHECK(BroadcastPlan::Make(TensorShape({0}), TensorShape({2})).status().code() ==
        Code::kInvalidArgument);
  CHECK(MustPlan({0, 3}, {1, 3}).output_shape() == TensorShape({0, 3}));
}

TEST_CASE("ApplyBroadcast matches the naive definition over many shape pairs") {
  // Every pair drawn from these covers same-shape, scalar, row, column,
  // middle-axis and mixed patterns up to rank 4, plus empty outputs.
  const std::vector<Dims> shapes = {{},        {1},       {3},          {2, 1},    {1, 3},
                                    {2, 3},    {4, 1, 3}, {4, 2, 1},    {1, 2, 3}, {2, 1, 2, 3},
                                    {1, 1, 1}, {0, 3},    {4, 2, 3},    {2, 2, 1, 1}};
  int pairs = 0;
  for (const Dims& xd : shapes) {
    for (const Dims& yd : shapes) {
      auto plan = BroadcastPlan::Make(TensorShape(xd), TensorShape(yd));
      if (!plan.ok()) continue;
      ++pairs;
      const std::vector<double> x = math_test::Ramp(math_test::Count(xd), 0.75, -3.0);
      const std::vector<double> y = math_test::Ramp(math_test::Count(yd), 1.25, 1.0);
      const auto f = [](double a, double b) { return 3.0 * a - b; };
      math_test::Ref want = NaiveBroadcast(xd, x, yd, y, f);
      INFO(TensorShape(xd).ToString() << " with " << TensorShape(yd).ToString());
      REQUIRE(plan->output_shape() == TensorShape(want.dims));
      std::vector<double> got(want.values.size(), -99.0);
      ApplyBroadcast<double, double>(*plan, x.data(), y.data(), got.data(),
                                     [](const auto& a, const auto& b) { return 3.0 * a - b; });
      CHECK(got == want.values);
    }
  }
  CHECK(pairs > 60);
}

TEST_CASE("ApplyBroadcast can produce another element type") {
  BroadcastPlan p = MustPlan({2, 1}, {1, 3});
  const int32_t x[] = {1, 5};
  const int32_t y[] = {0, 1, 9};
  bool out[6];
  ApplyBroadcast<int32_t, bool>(p, x, y, out, [](const auto& a, const auto& b) { return a > b; });
  const bool want[] = {true, false, false, true, true, false};
  for (int i = 0; i < 6; ++i) CHECK(out[i] == want[i]);
}

}  // namespace
}  // namespace tfd::kernels
