// KernelCosts (daemon/runtime/kernel_costs.h): which kernels the executor
// treats as too cheap for a hand-off to the pool.
#include "daemon/runtime/kernel_costs.h"

#include <catch2/catch.hpp>

namespace tfd {
namespace {

using namespace std::chrono_literals;

TEST_CASE("a kernel is cheap once measured below the threshold, never before") {
  KernelCosts costs(3);
  CHECK_FALSE(costs.Cheap(0));  // not measured: expensive until known
  CHECK(costs.Estimate(0) == 0ns);
  costs.Record(0, 2us);
  CHECK(costs.Cheap(0));
  costs.Record(1, 50us);
  CHECK_FALSE(costs.Cheap(1));
  costs.Record(2, KernelCosts::kInlineBelow);
  CHECK_FALSE(costs.Cheap(2));  // below, not at
  // A run measured as taking no time at all is still a measurement.
  KernelCosts zero(1);
  zero.Record(0, 0ns);
  CHECK(zero.Cheap(0));
}

TEST_CASE("a kernel's estimate follows its runs down gradually, and up at once when far slower") {
  KernelCosts costs(1);
  costs.Record(0, 40us);
  // Faster runs bring it down a quarter of the way each.
  costs.Record(0, 0us);
  CHECK(costs.Estimate(0) == 30us);
  int runs = 0;
  while (!costs.Cheap(0) && runs < 100) {
    costs.Record(0, 1us);
    ++runs;
  }
  CHECK(costs.Cheap(0));
  CHECK(runs > 1);  // not one fast run alone
  // A run more than four times the estimate replaces it: a kernel whose
  // input grew stops running inline after one slow run.
  const auto before = costs.Estimate(0);
  costs.Record(0, 5 * before + 20us);
  CHECK(costs.Estimate(0) == 5 * before + 20us);
  CHECK_FALSE(costs.Cheap(0));
  // A slower run within four times only moves it part of the way.
  KernelCosts mild(1);
  mild.Record(0, 4us);
  mild.Record(0, 12us);
  CHECK(mild.Estimate(0) == 6us);
}

TEST_CASE("a run longer than the estimate can hold counts as the longest") {
  KernelCosts costs(1);
  costs.Record(0, 1h);
  CHECK(costs.Estimate(0) >= 4s);
  CHECK_FALSE(costs.Cheap(0));
}

}  // namespace
}  // namespace tfd
