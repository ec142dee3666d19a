// Element-wise unary ops against <cmath> in float64, on a rank-2 tensor, a
// scalar and an empty tensor.
#include <cmath>

#include <catch2/catch.hpp>

#include "tests/kernels/math/math_test_util.h"

namespace tfd {
namespace {

using namespace math_test;  // NOLINT: test helpers
using Dims = std::vector<int64_t>;
using Fn = std::function<double(double)>;

void CheckUnary(const std::string& op, DType d, const std::vector<double>& inputs, const Fn& f,
                double tol) {
  // The same values as [2, n/2], as a scalar (the first) and as an empty tensor.
  const int64_t n = static_cast<int64_t>(inputs.size());
  const std::vector<std::pair<Dims, std::vector<double>>> cases = {
      {{2, n / 2}, inputs}, {{}, {inputs[0]}}, {{0, 4}, {}}};
  for (const auto& [dims, values] : cases) {
    INFO(op << " " << DTypeName(d) << " " << TensorShape(dims).ToString());
    std::vector<double> want;
    for (double v : Values(MakeOf(d, dims, values))) want.push_back(f(v));
    Tensor y = Run1(op, {{"T", d}}, {MakeOf(d, dims, values)});
    CHECK(y.dtype() == d);
    ExpectTensor(y, dims, want, tol);
  }
}

const std::vector<double> kSigned = {-3.5, -1, -0.25, 0, 0.5, 2, 7.75, -12};
const std::vector<double> kPositive = {0.125, 0.5, 1, 2, 3.5, 10, 100, 1e-3};

TEST_CASE("float unary ops match cmath") {
  for (DType d : {DType::kFloat64, DType::kFloat32}) {
    const double tol = d == DType::kFloat32 ? 2e-6 : 1e-14;
    CheckUnary("Neg", d, kSigned, [](double v) { return -v; }, tol);
    CheckUnary("Square", d, kSigned, [](double v) { return v * v; }, tol);
    CheckUnary("Abs", d, kSigned, [](double v) { return std::fabs(v); }, tol);
    CheckUnary("Sign", d, kSigned, [](double v) { return v > 0 ? 1.0 : (v < 0 ? -1.0 : 0.0); }, 0);
    CheckUnary("Floor", d, kSigned, [](double v) { return std::floor(v); }, 0);
    CheckUnary("Exp", d, kSigned, [](double v) { return std::exp(v); }, tol);
    CheckUnary("Sqrt", d, kPositive, [](double v) { return std::sqrt(v); }, tol);
    CheckUnary("Rsqrt", d, kPositive, [](double v) { return 1 / std::sqrt(v); }, tol);
    CheckUnary("Log", d, kPositive, [](double v) { return std::log(v); }, tol);
    CheckUnary("Reciprocal", d, kSigned, [](double v) { return 1 / v; }, tol);
  }
}

TEST_CASE("float unary ops follow IEEE at the edges") {
  Tensor y = Run1("Log", {{"T", DType::kFloat64}}, {Make<double>({3}, {0, -1, INFINITY})});
  ExpectTensor(y, {3}, {-INFINITY, NAN, INFINITY});
  y = Run1("Sqrt", {{"T", DType::kFloat32}}, {Make<float>({2}, {-4, 0})});
  ExpectTensor(y, {2}, {NAN, 0});
  y = Run1("Reciprocal", {{"T", DType::kFloat64}}, {Make<double>({1}, {0})});
  ExpectTensor(y, {1}, {INFINITY});
}

TEST_CASE("integer unary ops") {
  const std::vector<double> ints = {-7, -1, 0, 3, 12, -40, 5, 1};
  for (DType d : {DType::kInt32, DType::kInt64}) {
    CheckUnary("Neg", d, ints, [](double v) { return -v; }, 0);
    CheckUnary("Square", d, ints, [](double v) { return v * v; }, 0);
    CheckUnary("Abs", d, ints, [](double v) { return std::fabs(v); }, 0);
    CheckUnary("Sign", d, ints, [](double v) { return v > 0 ? 1.0 : (v < 0 ? -1.0 : 0.0); }, 0);
  }
}

TEST_CASE("LogicalNot negates bools") {
  ExpectTensor(Run1("LogicalNot", {}, {Make<bool>({2, 2}, {1, 0, 0, 1})}), {2, 2}, {0, 1, 1, 0});
  ExpectTensor(Run1("LogicalNot", {}, {Make<bool>({}, {0})}), {}, {1});
  ExpectTensor(Run1("LogicalNot", {}, {Make<bool>({0}, {})}), {0}, {});
}

TEST_CASE("unary ops refuse dtypes outside their attr set") {
  auto out = testing::RunOp(Registry(), "Sqrt", {{"T", DType::kInt32}}, {Make<int32_t>({1}, {4})});
  CHECK(out.status().code() == Code::kInvalidArgument);
  CHECK(out.status().message().find("int32") != std::string::npos);
}

}  // namespace
}  // namespace tfd
