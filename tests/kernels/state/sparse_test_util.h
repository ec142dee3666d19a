// Shared by the tests of the row-updating state kernels (Scatter*,
// SparseApply*): tensors from double vectors, element checks against float64
// references that demand the reference's IEEE class (NaN, inf, signed zero),
// and the edge values the references run over.
#pragma once

#include <cmath>
#include <limits>
#include <vector>

#include "tests/kernels/state/state_test_util.h"

namespace tfd::testing::sparse {

using Vec = std::vector<double>;

template <typename T>
Tensor Make(const Vec& v, const TensorShape& shape) {
  std::vector<T> cast(v.begin(), v.end());
  return Tensor::FromVector<T>(cast, shape);
}

template <typename I>
Tensor Indices(const std::vector<int64_t>& v) {
  std::vector<I> cast(v.begin(), v.end());
  return Tensor::FromVector<I>(cast);
}

// got[i] is want[i] rounded to T: NaN where want is NaN, the same infinity,
// and otherwise within `rel` (relative, or absolute below 1); with rel 0,
// exactly, down to the sign of a zero.
template <typename T>
void CheckNear(const Tensor& got, const Vec& want, double rel) {
  REQUIRE(got.num_elements() == static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    const double g = static_cast<double>(got.data<T>()[i]);
    const double w = static_cast<double>(static_cast<T>(want[i]));
    INFO("element " << i << ": got " << g << ", want " << w);
    if (std::isnan(w)) {
      CHECK(std::isnan(g));
    } else if (std::isinf(w)) {
      CHECK(g == w);
    } else {
      CHECK(std::isfinite(g));
      CHECK(std::abs(g - w) <= rel * std::max(1.0, std::abs(w)));
      if (w == 0 && rel == 0) CHECK(std::signbit(g) == std::signbit(w));  // -0 stays -0
    }
  }
}

// inf, -inf, NaN, signed zeros, denormals of T and ordinary values.
template <typename T>
Vec EdgeValues() {
  using L = std::numeric_limits<T>;
  return {L::infinity(), -L::infinity(), L::quiet_NaN(), 0.0, -0.0,
          static_cast<double>(L::denorm_min()), -static_cast<double>(L::denorm_min()),
          static_cast<double>(L::min()), 1.0, -2.5, 0.5, 3.0};
}

}  // namespace tfd::testing::sparse
