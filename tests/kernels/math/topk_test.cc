// TopKV2 against a reference that ranks every element by counting the
// elements that beat it (larger, or equal at a lower index, NaN above all),
// for k from 0 to the row length, sorted and unsorted, on several shapes and
// dtypes; and its errors.
#include <cmath>

#include <catch2/catch.hpp>

#include "tests/kernels/math/math_test_util.h"

namespace tfd {
namespace {

using namespace math_test;  // NOLINT: test helpers
using Dims = std::vector<int64_t>;

bool Beats(double a, int64_t ia, double b, int64_t ib) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && (!std::isnan(b) || ia < ib);
  return a > b || (a == b && ia < ib);
}

TEST_CASE("TopKV2 picks the k largest per row, ties by lower index, NaN first") {
  // Rows of 12 and more repeat values (Ramp cycles every 11): ties.
  const std::vector<Dims> shapes = {{7}, {3, 5}, {2, 2, 4}, {4, 1}, {2, 13}};
  for (const Dims& dims : shapes) {
    const int64_t n = dims.back(), rows = Count(dims) / n;
    // Ramp repeats values (ties); a NaN and infinities are planted in float data.
    std::vector<double> x = Ramp(Count(dims), 0.5, -1.5);
    for (DType d : {DType::kFloat64, DType::kFloat32, DType::kInt32, DType::kInt64}) {
      std::vector<double> xs = x;
      if (d == DType::kFloat64 || d == DType::kFloat32) {
        xs[0] = NAN;
        if (xs.size() > 3) xs[3] = INFINITY;
        if (xs.size() > 5) xs[5] = -INFINITY;
      }
      xs = Values(MakeOf(d, dims, xs));
      for (int64_t k = 0; k <= n; ++k) {
        for (bool sorted : {true, false}) {
          INFO(TensorShape(dims).ToString() << " " << DTypeName(d) << " k " << k << " sorted "
                                             << sorted);
          auto out = testing::RunOp(Registry(), "TopKV2", {{"T", d}, {"sorted", sorted}},
                                    {MakeOf(d, dims, xs), Tensor::Scalar<int32_t>(int32_t(k))});
          INFO(out.status().ToString());
          REQUIRE(out.ok());
          Dims od = dims;
          od.back() = k;
          std::vector<double> want_v, want_i;
          for (int64_t r = 0; r < rows; ++r) {
            // place[i] = how many elements of the row beat element i.
            std::vector<std::pair<int64_t, int64_t>> chosen;  // (place, index)
            for (int64_t i = 0; i < n; ++i) {
              int64_t place = 0;
              for (int64_t j = 0; j < n; ++j) place += Beats(xs[r * n + j], j, xs[r * n + i], i);
              if (place < k) chosen.push_back({sorted ? place : i, i});
            }
            std::sort(chosen.begin(), chosen.end());
            for (const auto& [key, i] : chosen) {
              want_v.push_back(xs[r * n + i]);
              want_i.push_back(static_cast<double>(i));
            }
          }
          ExpectTensor((*out)[0], od, want_v, 0);
          ExpectTensor((*out)[1], od, want_i, 0);
          CHECK((*out)[1].dtype() == DType::kInt32);
        }
      }
    }
  }
}

TEST_CASE("TopKV2 refuses k outside [0, row length] and scalar inputs") {
  const Tensor x = Make<double>({2, 3}, Ramp(6));
  ExpectInvalid("TopKV2", {{"T", DType::kFloat64}}, {x, Tensor::Scalar<int32_t>(4)},
                {"[0, 3]", "got 4"});
  ExpectInvalid("TopKV2", {{"T", DType::kFloat64}}, {x, Tensor::Scalar<int32_t>(-1)}, {"got -1"});
  ExpectInvalid("TopKV2", {{"T", DType::kFloat64}},
                {Tensor::Scalar<double>(1), Tensor::Scalar<int32_t>(1)}, {"rank >= 1"});
  auto r = InferShapes("TopKV2", {{"T", DType::kFloat32}}, {PartialShape({-1, 9}), {}});
  REQUIRE(r.status.ok());
  CHECK(r.outputs[0] == PartialShape({-1, -1}));
}

}  // namespace
}  // namespace tfd
