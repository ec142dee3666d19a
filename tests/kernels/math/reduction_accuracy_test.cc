// Sum and Mean of 10^8 float32 values, in the three layouts the kernel
// reduces differently (the whole tensor, the last axis of [2, 5e7], the first
// axis of [5e7, 2]), against a float64 reference: within 1e-6 relative. A
// running float32 sum is 12% off on the first input. Each case holds one
// 400 MB input; tagged [slow] and run as meson's `slow` suite (a few seconds).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/kernels/math/math_test_util.h"

namespace tfd {
namespace {

constexpr int64_t kCount = 100000000;

// The float64 sums of each row and of each column of x viewed as
// [rows, cols].
std::vector<double> RowSums(const float* x, int64_t rows, int64_t cols) {
  std::vector<double> sums(rows, 0.0);
  for (int64_t i = 0; i < rows * cols; ++i) sums[i / cols] += x[i];
  return sums;
}
std::vector<double> ColumnSums(const float* x, int64_t rows, int64_t cols) {
  std::vector<double> sums(cols, 0.0);
  for (int64_t i = 0; i < rows * cols; ++i) sums[i % cols] += x[i];
  return sums;
}

// Runs `op` over `axis` of x viewed as `shape` and checks every output
// against `expected` (sums; divided by the count for Mean).
void CheckReduction(const std::string& op, const Tensor& x, const TensorShape& shape, int axis,
                    const std::vector<double>& expected) {
  CAPTURE(op, shape.ToString(), axis);
  auto view = x.Reshaped(shape);
  REQUIRE(view.ok());
  auto out = testing::RunOp(math_test::Registry(), op, {{"T", DType::kFloat32}},
                            {*view, Tensor::Scalar(int32_t{axis})});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  const Tensor& y = (*out)[0];
  REQUIRE(y.num_elements() == static_cast<int64_t>(expected.size()));
  const double count = static_cast<double>(shape.dim(axis));
  for (size_t i = 0; i < expected.size(); ++i) {
    const double want = op == "Mean" ? expected[i] / count : expected[i];
    const double got = y.data<float>()[i];
    CAPTURE(i, got, want);
    CHECK(std::abs(got - want) / std::abs(want) < 1e-6);
  }
}

void CheckAllLayouts(const Tensor& x) {
  const float* p = x.data<float>();
  const std::vector<double> wide = RowSums(p, 2, kCount / 2);    // [2, 5e7], last axis
  const std::vector<double> tall = ColumnSums(p, kCount / 2, 2);  // [5e7, 2], first axis
  const double total = wide[0] + wide[1];
  for (const char* op : {"Sum", "Mean"}) {
    CheckReduction(op, x, TensorShape({kCount}), 0, {total});
    CheckReduction(op, x, TensorShape({2, kCount / 2}), 1, wide);
    CheckReduction(op, x, TensorShape({kCount / 2, 2}), 0, tall);
  }
}

TEST_CASE("10^8 copies of 0.1f sum and average accurately in every layout", "[slow]") {
  auto x = Tensor::Allocate(DType::kFloat32, TensorShape({kCount}));
  REQUIRE(x.ok());
  std::fill_n(x->data<float>(), kCount, 0.1f);
  CheckAllLayouts(*x);
}

TEST_CASE("10^8 values of mixed magnitudes sum and average accurately in every layout",
          "[slow]") {
  auto x = Tensor::Allocate(DType::kFloat32, TensorShape({kCount}));
  REQUIRE(x.ok());
  // From 1e-3 to 200 (as the variable), spread over six decades by a
  // fixed xorshift generator.
  uint64_t s = 0x9e3779b97f4a7c15ull;
  float* p = x->data<float>();
  for (int64_t i = 0; i < kCount; ++i) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    const double u = static_cast<double>(s >> 11) / 9007199254740992.0;  // [0, 1)
    p[i] = static_cast<float>(std::min(200.0, std::pow(10.0, 6 * u - 3)));
  }
  CheckAllLayouts(*x);
}

}  // namespace
}  // namespace tfd
