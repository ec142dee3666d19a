// Auc against the AUC's definition counted pair by pair: the share of
// (positive, negative) pairs the positive scores higher, a tie counting a
// half — what sklearn's roc_auc_score returns; and its errors.
#include <cmath>
#include <random>

#include <catch2/catch.hpp>

#include "tests/kernels/math/math_test_util.h"

namespace tfd {
namespace {

using namespace math_test;  // NOLINT: test helpers

double PairwiseAuc(const std::vector<double>& labels, const std::vector<double>& scores) {
  double wins = 0, pairs = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    for (size_t j = 0; j < labels.size(); ++j) {
      if (labels[i] != 1 || labels[j] != 0) continue;
      pairs += 1;
      wins += scores[i] > scores[j] ? 1 : scores[i] == scores[j] ? 0.5 : 0;
    }
  }
  return wins / pairs;
}

StatusOr<double> RunAuc(const std::vector<double>& labels, const std::vector<double>& scores,
                        DType dtype = DType::kFloat32) {
  const auto n = static_cast<int64_t>(labels.size());
  auto out = testing::RunOp(Registry(), "Auc", {{"T", dtype}},
                            {Make<float>({n}, labels), MakeOf(dtype, {n}, scores)});
  if (!out.ok()) return out.status();
  REQUIRE((*out)[0].dtype() == DType::kFloat64);
  return (*out)[0].scalar<double>();
}

TEST_CASE("Auc is the pairwise AUC, ties counting a half") {
  // Hand-checked: 3 positives, 2 negatives; pairs won 1 + 1 + 0.5 + 1 + 1 + 0 of 6.
  auto small = RunAuc({1, 0, 1, 0, 1}, {0.9, 0.1, 0.5, 0.5, 0.05});
  REQUIRE(small.ok());
  CHECK(*small == Approx(3.5 / 6).epsilon(1e-12));

  std::mt19937 gen(7);
  for (int trial = 0; trial < 20; ++trial) {
    const int n = 2 + trial * 7;
    std::vector<double> labels, scores;
    for (int i = 0; i < n; ++i) {
      labels.push_back(i < 1 ? 0 : i < 2 ? 1 : static_cast<double>(gen() % 2));
      // Few distinct values, so ties are common; infinities rank as extremes.
      scores.push_back(static_cast<double>(gen() % 5) - 2);
    }
    if (trial % 3 == 0) scores[0] = INFINITY, scores[1] = -INFINITY;
    for (DType d : {DType::kFloat32, DType::kFloat64}) {
      INFO("trial " << trial << " " << DTypeName(d));
      auto auc = RunAuc(labels, scores, d);
      REQUIRE(auc.ok());
      CHECK(*auc == Approx(PairwiseAuc(labels, scores)).epsilon(1e-12));
    }
  }
}

TEST_CASE("Auc refuses what has no AUC") {
  auto one_class = RunAuc({0, 0, 0}, {0.1, 0.2, 0.3});
  CHECK(one_class.status().code() == Code::kInvalidArgument);
  CHECK(one_class.status().message().find("needs both classes") != std::string::npos);
  CHECK(RunAuc({}, {}).status().code() == Code::kInvalidArgument);
  CHECK(RunAuc({0, 1, 0.5}, {1, 2, 3}).status().code() == Code::kInvalidArgument);
  auto nan = RunAuc({0, 1}, {NAN, 1});
  CHECK(nan.status().code() == Code::kInvalidArgument);
  CHECK(nan.status().message().find("prediction 0 is NaN") != std::string::npos);
  auto shapes = testing::RunOp(Registry(), "Auc", {{"T", DType::kFloat32}},
                               {Make<float>({2}, {0, 1}), Make<float>({3}, {1, 2, 3})});
  CHECK(shapes.status().code() == Code::kInvalidArgument);
}

}  // namespace
}  // namespace tfd
