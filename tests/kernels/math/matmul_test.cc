// MatMul for every transpose combination and dtype against a naive triple
// loop in float64, and its shape errors.
#include <catch2/catch.hpp>

#include "tests/kernels/math/math_test_util.h"

namespace tfd {
namespace {

using namespace math_test;  // NOLINT: test helpers

// Element (r, c) of the stored rows x cols matrix `m`, transposed or not.
double At(const std::vector<double>& m, int64_t cols, bool transposed, int64_t r, int64_t c) {
  return transposed ? m[c * cols + r] : m[r * cols + c];
}

void CheckMatMul(DType d, int64_t m, int64_t k, int64_t n, bool ta, bool tb, double tol) {
  const std::vector<int64_t> a_dims = ta ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k};
  const std::vector<int64_t> b_dims = tb ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n};
  const bool integral = d == DType::kInt32 || d == DType::kInt64;
  const std::vector<double> a = Ramp(m * k, integral ? 1 : 0.375, -4);
  const std::vector<double> b = Ramp(k * n, integral ? 2 : 0.625, -3);
  std::vector<double> want(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t p = 0; p < k; ++p) {
        want[i * n + j] += At(a, a_dims[1], ta, i, p) * At(b, b_dims[1], tb, p, j);
      }
    }
  }
  INFO(DTypeName(d) << " m=" << m << " k=" << k << " n=" << n << " ta=" << ta << " tb=" << tb);
  Tensor out = Run1("MatMul", {{"T", d}, {"transpose_a", ta}, {"transpose_b", tb}},
                    {MakeOf(d, a_dims, a), MakeOf(d, b_dims, b)});
  ExpectTensor(out, {m, n}, want, tol);
}

TEST_CASE("MatMul matches the naive product for every transpose combination") {
  for (DType d : {DType::kFloat64, DType::kFloat32, DType::kInt32, DType::kInt64}) {
    const double tol = d == DType::kFloat32 ? 1e-5 : 1e-12;
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        CheckMatMul(d, 2, 3, 4, ta, tb, tol);
        CheckMatMul(d, 1, 1, 1, ta, tb, tol);
        CheckMatMul(d, 5, 1, 3, ta, tb, tol);
        // Large enough for Eigen's blocked GEMM path.
        CheckMatMul(d, 37, 29, 41, ta, tb, tol);
      }
    }
  }
}

TEST_CASE("MatMul with an empty dimension") {
  for (bool ta : {false, true}) {
    CheckMatMul(DType::kFloat64, 3, 0, 2, ta, false, 0);  // k = 0: all zeros
    CheckMatMul(DType::kFloat64, 0, 3, 2, ta, true, 0);
    CheckMatMul(DType::kFloat64, 3, 2, 0, ta, false, 0);
  }
}

TEST_CASE("MatMul inner-dimension mismatch names both shapes") {
  ExpectInvalid("MatMul", {{"T", DType::kFloat32}},
                {Make<float>({2, 3}, Ramp(6)), Make<float>({4, 5}, Ramp(20))},
                {"[2, 3]", "[4, 5]", "3", "4"});
  // Compatible only without the transpose.
  ExpectInvalid("MatMul", {{"T", DType::kFloat32}, {"transpose_a", true}},
                {Make<float>({2, 3}, Ramp(6)), Make<float>({3, 2}, Ramp(6))},
                {"[2, 3]", "[3, 2]", "transposed"});
}

TEST_CASE("MatMul refuses operands that are not matrices") {
  ExpectInvalid("MatMul", {{"T", DType::kFloat64}},
                {Make<double>({3}, Ramp(3)), Make<double>({3, 1}, Ramp(3))}, {"rank 2", "[3]"});
  ExpectInvalid("MatMul", {{"T", DType::kFloat64}},
                {Make<double>({1, 1}, {1}), Make<double>({}, {1})}, {"rank 2", "[]"});
}

}  // namespace
}  // namespace tfd
