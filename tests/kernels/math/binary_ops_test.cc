// Broadcasting arithmetic, comparisons and logical ops against float64
// references from the naive broadcasting loop.
#include <cmath>
#include <limits>

#include <catch2/catch.hpp>

#include "tests/kernels/math/math_test_util.h"

namespace tfd {
namespace {

using namespace math_test;  // NOLINT: test helpers
using Dims = std::vector<int64_t>;
using Fn = std::function<double(double, double)>;

struct ShapePair {
  Dims x, y;
};
// The broadcasting cases every binary op is checked on.
const std::vector<ShapePair>& Pairs() {
  static const std::vector<ShapePair> pairs = {
      {{2, 3}, {2, 3}}, {{2, 3}, {3}}, {{3}, {2, 3}}, {{2, 1}, {1, 3}},
      {{}, {2, 3}},     {{2, 3}, {}},  {{}, {}},      {{0, 3}, {3}},
      {{2, 0}, {1}},    {{4, 1, 3}, {2, 1}}};
  return pairs;
}

// Runs `op` on every pair in dtype `d` and compares with `f` in float64.
// The Ramp parameters of x and y let each op keep clear of its undefined
// points (zero divisors, negative bases of fractional powers).
void CheckBinary(const std::string& op, DType d, const Fn& f, double tol = 1e-12,
                 double x_scale = 0.5, double x_shift = -2.25, double y_scale = 0.75,
                 double y_shift = 0.5) {
  for (const ShapePair& p : Pairs()) {
    const auto x = Ramp(Count(p.x), x_scale, x_shift);
    const auto y = Ramp(Count(p.y), y_scale, y_shift);
    INFO(op << " " << DTypeName(d) << " " << TensorShape(p.x).ToString() << " with "
            << TensorShape(p.y).ToString());
    // The reference sees the inputs as the op does, after conversion to d.
    Ref want = NaiveBroadcast(p.x, Values(MakeOf(d, p.x, x)), p.y, Values(MakeOf(d, p.y, y)), f);
    Tensor z = Run1(op, {{"T", d}}, {MakeOf(d, p.x, x), MakeOf(d, p.y, y)});
    ExpectTensor(z, want.dims, want.values, tol);
  }
}

TEST_CASE("Add, Sub, Mul, Maximum, Minimum, SquaredDifference broadcast like numpy") {
  for (DType d : {DType::kFloat64, DType::kFloat32, DType::kInt32, DType::kInt64}) {
    const double tol = d == DType::kFloat32 ? 1e-6 : 1e-12;
    // Integer cases use whole-number inputs.
    const bool integral = d == DType::kInt32 || d == DType::kInt64;
    const double xs = integral ? 1 : 0.5, ys = integral ? 2 : 0.75;
    auto check = [&](const char* op, const Fn& f) { CheckBinary(op, d, f, tol, xs, -3, ys, -4); };
    check("Add", [](double a, double b) { return a + b; });
    check("Sub", [](double a, double b) { return a - b; });
    check("Mul", [](double a, double b) { return a * b; });
    check("Maximum", [](double a, double b) { return std::max(a, b); });
    check("Minimum", [](double a, double b) { return std::min(a, b); });
    check("SquaredDifference", [](double a, double b) { return (a - b) * (a - b); });
  }
}

TEST_CASE("uint8 arithmetic wraps modulo 256") {
  Tensor z = Run1("Add", {{"T", DType::kUInt8}},
                  {Make<uint8_t>({3}, {250, 1, 128}), Make<uint8_t>({}, {10})});
  ExpectTensor(z, {3}, {4, 11, 138});
  z = Run1("Sub", {{"T", DType::kUInt8}}, {Make<uint8_t>({2}, {3, 200}), Make<uint8_t>({2}, {5, 100})});
  ExpectTensor(z, {2}, {254, 100});
}

TEST_CASE("Div divides floats exactly and truncates integers toward zero") {
  CheckBinary("Div", DType::kFloat64, [](double a, double b) { return a / b; }, 1e-12, 0.5,
              -2.25, 0.75, 0.5);
  CheckBinary("Div", DType::kFloat32, [](double a, double b) { return a / b; }, 1e-6, 0.5,
              -2.25, 0.75, 0.5);
  // Positive divisors 1..11, dividends of both signs.
  for (DType d : {DType::kInt32, DType::kInt64}) {
    CheckBinary("Div", d, [](double a, double b) { return std::trunc(a / b); }, 0, 3, -17, 1, 1);
  }
  Tensor z = Run1("Div", {{"T", DType::kInt32}},
                  {Make<int32_t>({4}, {-7, 7, -7, 7}), Make<int32_t>({4}, {2, 2, -2, -2})});
  ExpectTensor(z, {4}, {-3, 3, 3, -3});
  // The one overflowing quotient wraps instead of trapping.
  const double min32 = std::numeric_limits<int32_t>::min();
  z = Run1("Div", {{"T", DType::kInt32}}, {Make<int32_t>({}, {min32}), Make<int32_t>({}, {-1})});
  ExpectTensor(z, {}, {min32});
  z = Run1("Div", {{"T", DType::kUInt8}}, {Make<uint8_t>({2}, {255, 7}), Make<uint8_t>({}, {2})});
  ExpectTensor(z, {2}, {127, 3});
}

TEST_CASE("integer division by zero is INVALID_ARGUMENT, float division gives inf") {
  ExpectInvalid("Div", {{"T", DType::kInt32}},
                {Make<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6}), Make<int32_t>({3}, {1, 0, 2})},
                {"division by zero"});
  ExpectInvalid("Div", {{"T", DType::kInt64}}, {Make<int64_t>({}, {1}), Make<int64_t>({}, {0})},
                {"division by zero"});
  ExpectInvalid("Div", {{"T", DType::kUInt8}}, {Make<uint8_t>({1}, {1}), Make<uint8_t>({1}, {0})},
                {"division by zero"});
  // Nothing is divided when the output is empty.
  Tensor z = Run1("Div", {{"T", DType::kInt32}},
                  {Make<int32_t>({0, 2}, {}), Make<int32_t>({2}, {0, 0})});
  CHECK(z.shape() == TensorShape({0, 2}));
  z = Run1("Div", {{"T", DType::kFloat64}}, {Make<double>({2}, {1, -1}), Make<double>({}, {0})});
  ExpectTensor(z, {2}, {INFINITY, -INFINITY});
}

TEST_CASE("Pow matches std::pow for floats and exact powers for integers") {
  CheckBinary("Pow", DType::kFloat64, [](double a, double b) { return std::pow(a, b); }, 1e-12,
              0.25, 0.25, 0.5, -2);
  CheckBinary("Pow", DType::kFloat32, [](double a, double b) { return std::pow(a, b); }, 1e-5,
              0.25, 0.25, 0.5, -2);
  CheckBinary("Pow", DType::kInt64, [](double a, double b) { return std::pow(a, b); }, 0, 1, -3,
              1, 0);
  Tensor z = Run1("Pow", {{"T", DType::kInt32}},
                  {Make<int32_t>({4}, {2, -3, 0, 7}), Make<int32_t>({4}, {10, 3, 0, 1})});
  ExpectTensor(z, {4}, {1024, -27, 1, 7});
  ExpectInvalid("Pow", {{"T", DType::kInt32}}, {Make<int32_t>({2}, {2, 2}), Make<int32_t>({2}, {1, -1})},
                {"negative integer powers", "-1"});
}

TEST_CASE("comparisons give bool and broadcast") {
  for (DType d : {DType::kFloat64, DType::kFloat32, DType::kInt32, DType::kInt64}) {
    // Overlapping value ranges so every outcome occurs, equality included.
    auto check = [&](const char* op, const Fn& f) { CheckBinary(op, d, f, 0, 1, -3, 1, -4); };
    check("Greater", [](double a, double b) { return a > b ? 1.0 : 0.0; });
    check("GreaterEqual", [](double a, double b) { return a >= b ? 1.0 : 0.0; });
    check("Less", [](double a, double b) { return a < b ? 1.0 : 0.0; });
    check("LessEqual", [](double a, double b) { return a <= b ? 1.0 : 0.0; });
    check("Equal", [](double a, double b) { return a == b ? 1.0 : 0.0; });
    check("NotEqual", [](double a, double b) { return a != b ? 1.0 : 0.0; });
  }
  Tensor z = Run1("Equal", {{"T", DType::kBool}},
                  {Make<bool>({2, 1}, {1, 0}), Make<bool>({2}, {1, 0})});
  CHECK(z.dtype() == DType::kBool);
  ExpectTensor(z, {2, 2}, {1, 0, 0, 1});
  // NaN compares unequal to everything, itself included.
  z = Run1("NotEqual", {{"T", DType::kFloat64}}, {Make<double>({}, {NAN}), Make<double>({}, {NAN})});
  ExpectTensor(z, {}, {1});
}

TEST_CASE("LogicalAnd and LogicalOr broadcast over bool tensors") {
  const Tensor x = Make<bool>({2, 1}, {1, 0});
  const Tensor y = Make<bool>({1, 3}, {1, 0, 1});
  ExpectTensor(Run1("LogicalAnd", {}, {x, y}), {2, 3}, {1, 0, 1, 0, 0, 0});
  ExpectTensor(Run1("LogicalOr", {}, {x, y}), {2, 3}, {1, 1, 1, 1, 0, 1});
  ExpectTensor(Run1("LogicalOr", {}, {Make<bool>({}, {0}), Make<bool>({0}, {})}), {0}, {});
}

TEST_CASE("binary ops refuse shapes that do not broadcast, naming both") {
  for (const char* op : {"Add", "Mul", "Div", "Greater", "Maximum"}) {
    ExpectInvalid(op, {{"T", DType::kFloat32}},
                  {Make<float>({2, 3}, Ramp(6)), Make<float>({2}, {1, 2})},
                  {"Incompatible shapes", "[2, 3]", "[2]"});
  }
  ExpectInvalid("LogicalAnd", {}, {Make<bool>({3}, {1, 1, 1}), Make<bool>({4}, {1, 1, 1, 1})},
                {"[3]", "[4]"});
}

}  // namespace
}  // namespace tfd
