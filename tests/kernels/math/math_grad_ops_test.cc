// BroadcastGradientArgs by hand-worked cases, and SqrtGrad / RsqrtGrad /
// ReciprocalGrad against central finite differences of the forward ops.
#include <cmath>

#include <catch2/catch.hpp>

#include "tests/kernels/math/math_test_util.h"

namespace tfd {
namespace {

using namespace math_test;  // NOLINT: test helpers
using Dims = std::vector<int64_t>;

void CheckGradArgs(DType t, const Dims& s0, const Dims& s1, const Dims& r0, const Dims& r1) {
  auto vec = [&](const Dims& d) {
    return MakeOf(t, {static_cast<int64_t>(d.size())}, std::vector<double>(d.begin(), d.end()));
  };
  INFO(TensorShape(s0).ToString() << " with " << TensorShape(s1).ToString());
  auto out = testing::RunOp(Registry(), "BroadcastGradientArgs", {{"T", t}}, {vec(s0), vec(s1)});
  REQUIRE(out.ok());
  REQUIRE(out->size() == 2);
  CHECK((*out)[0].dtype() == t);
  ExpectTensor((*out)[0], {static_cast<int64_t>(r0.size())}, std::vector<double>(r0.begin(), r0.end()));
  ExpectTensor((*out)[1], {static_cast<int64_t>(r1.size())}, std::vector<double>(r1.begin(), r1.end()));
}

TEST_CASE("BroadcastGradientArgs lists the axes each input was broadcast along") {
  for (DType t : {DType::kInt32, DType::kInt64}) {
    CheckGradArgs(t, {2, 3}, {2, 3}, {}, {});
    CheckGradArgs(t, {2, 3}, {3}, {}, {0});
    CheckGradArgs(t, {3}, {2, 3}, {0}, {});
    CheckGradArgs(t, {2, 1}, {1, 3}, {1}, {0});
    CheckGradArgs(t, {}, {2, 3}, {0, 1}, {});
    CheckGradArgs(t, {4, 1, 3}, {2, 1}, {1}, {0, 2});
    CheckGradArgs(t, {1, 3}, {1, 1}, {0}, {0, 1});  // size 1 in both: both lists
    CheckGradArgs(t, {0, 3}, {1, 3}, {}, {0});
  }
}

TEST_CASE("BroadcastGradientArgs refuses bad shapes") {
  ExpectInvalid("BroadcastGradientArgs", {}, {Make<int32_t>({2}, {2, 3}), Make<int32_t>({1}, {4})},
                {"Incompatible shapes", "[2, 3]", "[4]"});
  ExpectInvalid("BroadcastGradientArgs", {}, {Make<int32_t>({2}, {2, -3}), Make<int32_t>({1}, {3})},
                {"s0"});
  ExpectInvalid("BroadcastGradientArgs", {}, {Make<int32_t>({}, {2}), Make<int32_t>({1}, {2})},
                {"s0", "vector"});
}

// dz/dx of the forward op at x, by central differences of the op itself.
std::vector<double> NumericDerivative(const std::string& forward, const std::vector<double>& x) {
  std::vector<double> d;
  for (double v : x) {
    const double h = 1e-5 * std::max(1.0, std::fabs(v));
    const Tensor up = Run1(forward, {{"T", DType::kFloat64}}, {Make<double>({}, {v + h})});
    const Tensor down = Run1(forward, {{"T", DType::kFloat64}}, {Make<double>({}, {v - h})});
    d.push_back((up.scalar<double>() - down.scalar<double>()) / (2 * h));
  }
  return d;
}

void CheckGrad(const std::string& forward, const std::string& grad, const std::vector<double>& x) {
  const int64_t n = static_cast<int64_t>(x.size());
  const Tensor y = Run1(forward, {{"T", DType::kFloat64}}, {Make<double>({2, n / 2}, x)});
  const std::vector<double> dy = Ramp(n, 0.5, -1.75);
  const std::vector<double> slope = NumericDerivative(forward, x);
  std::vector<double> want;
  for (int64_t i = 0; i < n; ++i) want.push_back(dy[i] * slope[i]);
  INFO(grad);
  ExpectTensor(Run1(grad, {{"T", DType::kFloat64}}, {y, Make<double>({2, n / 2}, dy)}), {2, n / 2},
               want, 1e-7);
  // float32 agrees with the float64 result to float precision.
  const Tensor y32 = Run1(forward, {{"T", DType::kFloat32}}, {Make<float>({2, n / 2}, x)});
  ExpectTensor(Run1(grad, {{"T", DType::kFloat32}}, {y32, Make<float>({2, n / 2}, dy)}),
               {2, n / 2}, want, 1e-5);
}

TEST_CASE("SqrtGrad, RsqrtGrad, ReciprocalGrad match finite differences") {
  const std::vector<double> positive = {0.25, 0.5, 1, 1.5, 2, 3.75, 9, 40};
  CheckGrad("Sqrt", "SqrtGrad", positive);
  CheckGrad("Rsqrt", "RsqrtGrad", positive);
  CheckGrad("Reciprocal", "ReciprocalGrad", {-4, -1.5, -0.5, 0.25, 0.75, 1, 2.5, 6});
}

TEST_CASE("unary gradient ops need y and dy of one shape") {
  for (const char* op : {"SqrtGrad", "RsqrtGrad", "ReciprocalGrad"}) {
    ExpectInvalid(op, {{"T", DType::kFloat32}}, {Make<float>({2}, {1, 2}), Make<float>({3}, {1, 2, 3})},
                  {"[2]", "[3]"});
  }
  ExpectTensor(Run1("SqrtGrad", {{"T", DType::kFloat64}}, {Make<double>({0}, {}), Make<double>({0}, {})}),
               {0}, {});
}

}  // namespace
}  // namespace tfd
