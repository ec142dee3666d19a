// tfctl start --cpus-per-task: each task its own run of the allowed CPUs, in
// start order; too few CPUs or a malformed count is a usage error that says
// how many were needed and allowed.
#include "common/cpu_split.h"

#include <catch2/catch.hpp>

namespace tfd {
namespace {

using Sets = std::vector<std::vector<int>>;

TEST_CASE("cpus per task: each task the next N allowed CPUs, in the allowed set's order") {
  const std::vector<int> allowed = {2, 3, 5, 8, 9, 10, 11};
  CHECK(SplitCpus("2", allowed, 3).value() == Sets{{2, 3}, {5, 8}, {9, 10}});
  CHECK(SplitCpus("1", allowed, 1).value() == Sets{{2}});
  CHECK(SplitCpus("7", allowed, 1).value() == Sets{allowed});
}

TEST_CASE("cpus per task: even gives every task as many, leftovers unused") {
  const std::vector<int> allowed = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  CHECK(SplitCpus("even", allowed, 4).value() ==
        Sets{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}, {12, 13, 14, 15}});
  CHECK(SplitCpus("even", allowed, 3).value() ==
        Sets{{0, 1, 2, 3, 4}, {5, 6, 7, 8, 9}, {10, 11, 12, 13, 14}});
}

TEST_CASE("cpus per task: none asked pins nothing") {
  CHECK(SplitCpus("", {0, 1}, 3).value() == Sets{{}, {}, {}});
}

TEST_CASE("cpus per task: too few CPUs says how many were needed and allowed") {
  auto few = SplitCpus("2", {0, 1, 2}, 2);
  REQUIRE_FALSE(few.ok());
  CHECK(few.status().code() == Code::kInvalidArgument);
  CHECK(few.status().message() ==
        "--cpus-per-task 2 needs 4 CPUs for the 2 tasks on this host (2 each), but this "
        "process may use only 3 (0-2)");
  auto even = SplitCpus("even", {4, 6}, 3);
  REQUIRE_FALSE(even.ok());
  CHECK(even.status().message() ==
        "--cpus-per-task even needs 3 CPUs for the 3 tasks on this host (1 each), but this "
        "process may use only 2 (4,6)");
}

TEST_CASE("cpus per task: a count that is not a positive number or 'even' is refused") {
  for (const char* bad : {"0", "-1", "two", "2x", "1.5", "EVEN"}) {
    INFO(bad);
    auto r = SplitCpus(bad, {0, 1}, 1);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == Code::kInvalidArgument);
  }
}

TEST_CASE("cpu lists read as /proc/PID/status writes them") {
  CHECK(FormatCpuList({}) == "");
  CHECK(FormatCpuList({3}) == "3");
  CHECK(FormatCpuList({0, 1, 2, 3}) == "0-3");
  CHECK(FormatCpuList({0, 2, 5, 6, 7}) == "0,2,5-7");
}

}  // namespace
}  // namespace tfd
