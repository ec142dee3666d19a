// The arithmetic CollectiveReduce merges and finishes with: each merge op on
// each dtype, IEEE specials as numpy gives them, integer wrap and truncation.
#include "kernels/collective/reduce_math.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

namespace tfd::kernels {
namespace {

template <typename T>
std::vector<T> Merged(MergeOp op, std::vector<T> a, const std::vector<T>& b) {
  Merge(DTypeOf<T>::value, op, a.data(), a.data(), b.data(), static_cast<int64_t>(a.size()));
  return a;
}

TEST_CASE("each merge op on each dtype") {
  CHECK(Merged<float>(MergeOp::kAdd, {1, 2.5f}, {3, -1}) == std::vector<float>{4, 1.5f});
  CHECK(Merged<double>(MergeOp::kMul, {2, -3}, {4, 0.5}) == std::vector<double>{8, -1.5});
  CHECK(Merged<int32_t>(MergeOp::kMin, {1, -7}, {0, 3}) == std::vector<int32_t>{0, -7});
  CHECK(Merged<int64_t>(MergeOp::kMax, {1, -7}, {0, 3}) == std::vector<int64_t>{1, 3});
  CHECK(Merged<int64_t>(MergeOp::kAdd, {5}, {-9}) == std::vector<int64_t>{-4});
}

TEST_CASE("NaN and inf come out as numpy's sum, minimum and maximum give them") {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto sum = Merged<float>(MergeOp::kAdd, {inf, inf, nan, 1}, {-inf, 1, 1, inf});
  CHECK(std::isnan(sum[0]));
  CHECK(sum[1] == inf);
  CHECK(std::isnan(sum[2]));
  CHECK(sum[3] == inf);
  // np.minimum / np.maximum: a NaN on either side wins
  for (MergeOp op : {MergeOp::kMin, MergeOp::kMax}) {
    auto m = Merged<double>(op, {std::nan(""), 1.0}, {1.0, std::nan("")});
    CHECK(std::isnan(m[0]));
    CHECK(std::isnan(m[1]));
  }
  auto prod = Merged<double>(MergeOp::kMul, {0.0}, {-std::numeric_limits<double>::infinity()});
  CHECK(std::isnan(prod[0]));
}

TEST_CASE("integers wrap on overflow and truncate in Div") {
  const int32_t max = std::numeric_limits<int32_t>::max();
  CHECK(Merged<int32_t>(MergeOp::kAdd, {max}, {1}) ==
        std::vector<int32_t>{std::numeric_limits<int32_t>::min()});
  std::vector<int64_t> v{7, -7, 8};
  Finalize(DType::kInt64, FinalOp::kDiv, v.data(), 3, 2);
  CHECK(v == std::vector<int64_t>{3, -3, 4});
  std::vector<float> f{1, 3};
  Finalize(DType::kFloat32, FinalOp::kDiv, f.data(), 2, 4);
  CHECK(f == std::vector<float>{0.25f, 0.75f});
  Finalize(DType::kFloat32, FinalOp::kId, f.data(), 2, 4);
  CHECK(f == std::vector<float>{0.25f, 0.75f});
}

TEST_CASE("op names parse; others are INVALID_ARGUMENT naming the value") {
  CHECK(ParseMergeOp("Max").value() == MergeOp::kMax);
  CHECK(ParseFinalOp("Div").value() == FinalOp::kDiv);
  auto bad = ParseMergeOp("Sum");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == Code::kInvalidArgument);
  CHECK(bad.status().message().find("'Sum'") != std::string::npos);
  CHECK(ParseFinalOp("Mean").status().code() == Code::kInvalidArgument);
}

}  // namespace
}  // namespace tfd::kernels
