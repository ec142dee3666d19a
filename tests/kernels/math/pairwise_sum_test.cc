// PairwiseSum and its row and column forms: the same sums as a plain float64
// loop at every size around the block boundaries, and far closer to it than
// a running float32 sum over long runs.
#include "kernels/math/pairwise_sum.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

namespace tfd::kernels {
namespace {

// 1, 2, ..., small integers: every partial sum is exact in float32 up to
// 2^24, so any order of additions must give the exact answer.
std::vector<float> Counting(int64_t n) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(i % 7 + 1);
  return v;
}

TEST_CASE("pairwise sums are exact on exactly representable data, at every size") {
  for (int64_t n : {0, 1, 2, 127, 128, 129, 255, 256, 257, 1000, 4097}) {
    CAPTURE(n);
    const std::vector<float> v = Counting(n);
    double expected = 0;
    for (float f : v) expected += f;
    CHECK(PairwiseSum(v.data(), n) == expected);
    double squares = 0;
    for (float f : v) squares += f * f;
    CHECK(PairwiseSumOfSquares(v.data(), n) == squares);
  }
}

TEST_CASE("row and column sums match a plain loop around the block sizes") {
  for (int64_t rows : {1, 2, 31, 32, 33, 64, 65, 100, 300}) {
    for (int64_t cols : {1, 3, 10, 129}) {
      CAPTURE(rows, cols);
      const std::vector<float> v = Counting(rows * cols);
      std::vector<float> by_row(rows), by_col(cols);
      PairwiseRowSums(v.data(), rows, cols, by_row.data());
      PairwiseColumnSums(v.data(), rows, cols, by_col.data());
      for (int64_t r = 0; r < rows; ++r) {
        double s = 0;
        for (int64_t c = 0; c < cols; ++c) s += v[r * cols + c];
        CHECK(by_row[r] == s);
      }
      for (int64_t c = 0; c < cols; ++c) {
        double s = 0;
        for (int64_t r = 0; r < rows; ++r) s += v[r * cols + c];
        CHECK(by_col[c] == s);
      }
    }
  }
  std::vector<float> none(3, -1.0f);
  PairwiseColumnSums<float>(nullptr, 0, 3, none.data());
  CHECK(none == std::vector<float>(3, 0.0f));
}

TEST_CASE("a million copies of 0.1f sum to within 1e-6 of the exact value") {
  const int64_t n = 1000000;
  const std::vector<float> v(n, 0.1f);
  const double exact = static_cast<double>(0.1f) * n;
  CHECK(std::abs(PairwiseSum(v.data(), n) - exact) / exact < 1e-6);
  std::vector<float> cols(2);
  PairwiseColumnSums(v.data(), n / 2, 2, cols.data());
  CHECK(std::abs(cols[0] - exact / 2) / (exact / 2) < 1e-6);
}

}  // namespace
}  // namespace tfd::kernels
