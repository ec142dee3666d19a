// RecentSteps: holds exactly the last `capacity` distinct steps added,
// forgetting the oldest first, under long random and sequential runs that
// wrap its ring and shift its probe runs many times.
#include "daemon/runtime/recent_steps.h"

#include <catch2/catch.hpp>

#include <deque>
#include <random>
#include <set>

namespace tfd {
namespace {

// Adds `ids` to both, and checks every id ever added against the model.
void Exercise(RecentSteps& steps, size_t capacity, const std::vector<int64_t>& ids) {
  std::deque<int64_t> order;
  std::set<int64_t> held, ever;
  size_t checked = 0;
  for (int64_t id : ids) {
    steps.Add(id);
    ever.insert(id);
    if (!held.count(id)) {
      held.insert(id);
      order.push_back(id);
      if (order.size() > capacity) {
        held.erase(order.front());
        order.pop_front();
      }
    }
    if (steps.size() != held.size()) FAIL("size " << steps.size() << ", model " << held.size());
    if (++checked % 251 == 0 || checked == ids.size()) {
      size_t wrong = 0;
      for (int64_t e : ever) wrong += steps.Contains(e) != (held.count(e) == 1);
      INFO("after " << checked << " adds");
      REQUIRE(wrong == 0);
    }
  }
}

TEST_CASE("recent steps: the last capacity distinct ids, oldest forgotten first") {
  RecentSteps steps(4);
  CHECK(steps.capacity() == 4);
  for (int64_t id : {10, 20, 30, 40}) steps.Add(id);
  steps.Add(20);  // already there: not a new entry, 10 stays the oldest
  CHECK(steps.size() == 4);
  steps.Add(50);
  CHECK_FALSE(steps.Contains(10));
  for (int64_t id : {20, 30, 40, 50}) CHECK(steps.Contains(id));
  CHECK_FALSE(steps.Contains(60));
}

TEST_CASE("recent steps agree with a model over random, colliding and sequential ids") {
  std::mt19937_64 rng(7);
  for (size_t capacity : {size_t{1}, size_t{8}, size_t{64}, size_t{1024}}) {
    INFO("capacity " << capacity);
    RecentSteps steps(capacity);
    std::vector<int64_t> ids;
    // Random 63-bit ids (as masters make them), a small range that repeats
    // ids, negative ones, and a sequential run (as a local session counts).
    for (int i = 0; i < 3000; ++i) ids.push_back(static_cast<int64_t>(rng() >> 1));
    for (int i = 0; i < 3000; ++i) ids.push_back(static_cast<int64_t>(rng() % (3 * capacity + 1)));
    for (int i = 0; i < 500; ++i) ids.push_back(-static_cast<int64_t>(rng() % 100) - 1);
    for (int64_t i = 0; i < 3000; ++i) ids.push_back(1000000 + i);
    Exercise(steps, capacity, ids);
  }
}

TEST_CASE("recent steps take their memory at the first Add, not when made") {
  // An idle task's rendezvous holds one of 65,536 steps (docs/scaling.md).
  RecentSteps steps(65536);
  CHECK(steps.bytes() == 0);
  CHECK_FALSE(steps.Contains(7));
  CHECK(steps.bytes() == 0);
  steps.Add(7);
  const size_t taken = steps.bytes();
  CHECK(taken >= 65536 * 2 * sizeof(int64_t));
  CHECK(steps.Contains(7));
  for (int64_t id = 0; id < 70000; ++id) steps.Add(id);
  CHECK(steps.bytes() == taken);
  CHECK(steps.size() == 65536);
}

TEST_CASE("recent steps round a capacity up to a power of two") {
  CHECK(RecentSteps(0).capacity() == 1);
  CHECK(RecentSteps(5).capacity() == 8);
  CHECK(RecentSteps(65536).capacity() == 65536);
}

TEST_CASE("recent steps hold their whole table in memory from the first Add on") {
  // Taken zeroed in one call rather than faulted in by the steps after the
  // first, page by page (common/zero_pages.h).
  RecentSteps steps(65536);
  CHECK(steps.resident_bytes() == 0);
  steps.Add(123456789);
  CHECK(steps.resident_bytes() >= steps.bytes());
  CHECK(steps.Contains(123456789));
  CHECK_FALSE(steps.Contains(987654321));
}

}  // namespace
}  // namespace tfd
