// StepDeadlines: each deadline fires once, on time, unless removed first;
// the order deadlines arrive in does not delay an earlier one; removing from
// inside a firing deadline (a cancelled step ending there) does not hang.
#include "daemon/runtime/step_deadlines.h"

#include <catch2/catch.hpp>
#include <atomic>
#include <future>

namespace tfd {
namespace {

using namespace std::chrono_literals;
using Clock = StepDeadlines::Clock;

TEST_CASE("a deadline fires once, at its time") {
  StepDeadlines d;
  std::promise<Clock::time_point> fired;
  const auto when = Clock::now() + 50ms;
  d.Add(when, [&] { fired.set_value(Clock::now()); });
  auto f = fired.get_future();
  REQUIRE(f.wait_for(10s) == std::future_status::ready);
  CHECK(f.get() >= when);
  CHECK(d.size() == 0);
}

TEST_CASE("a removed deadline never fires") {
  StepDeadlines d;
  std::atomic<int> fired{0};
  for (int i = 0; i < 1000; ++i) {
    const auto id = d.Add(Clock::now() + 30ms, [&] { ++fired; });
    d.Remove(id);
  }
  d.Remove(12345678);  // never added: nothing to do
  // Deadlines fire in order: once a later one has fired, so would have these.
  std::promise<void> later;
  d.Add(Clock::now() + 60ms, [&] { later.set_value(); });
  REQUIRE(later.get_future().wait_for(5s) == std::future_status::ready);
  CHECK(fired == 0);
  CHECK(d.size() == 0);
}

TEST_CASE("an earlier deadline added while the thread sleeps for a later one fires on time") {
  StepDeadlines d;
  std::promise<void> late, early, at_once_fired;
  d.Add(Clock::now() + 1h, [&] { late.set_value(); });
  const auto at_once = d.Add(Clock::now(), [&] { at_once_fired.set_value(); });
  REQUIRE(at_once_fired.get_future().wait_for(5s) == std::future_status::ready);
  // Remove waits for a deadline that is firing, and the thread lets go of
  // the lock only to sleep again, until the hour: once it returns, the
  // thread sleeps until the hour is up.
  d.Remove(at_once);
  d.Add(Clock::now() + 20ms, [&] { early.set_value(); });
  CHECK(early.get_future().wait_for(5s) == std::future_status::ready);
  CHECK(late.get_future().wait_for(0s) == std::future_status::timeout);
}

TEST_CASE("a deadline after a removed one still fires when the removed one's time comes first") {
  // The thread sleeps until the first deadline, which is removed; the second,
  // later one was added without waking it.
  StepDeadlines d;
  std::promise<void> second;
  const auto first = d.Add(Clock::now() + 50ms, [] {});
  d.Add(Clock::now() + 100ms, [&] { second.set_value(); });
  d.Remove(first);
  CHECK(second.get_future().wait_for(5s) == std::future_status::ready);
}

TEST_CASE("many steps' deadlines: only the ones left fire, each once") {
  StepDeadlines d;
  constexpr int kSteps = 2000;
  std::vector<std::atomic<int>> fired(kSteps);
  std::vector<StepDeadlines::Id> ids;
  // The first fires 300 ms from now: every Remove below comes before it
  // (with deadlines from 50 µs on, a loaded machine fired some of the
  // removed ones before their Remove ran).
  const auto base = Clock::now() + 300ms;
  for (int i = 0; i < kSteps; ++i) {
    ids.push_back(d.Add(base + std::chrono::microseconds(50 * (kSteps - i)),
                        [&fired, i] { ++fired[i]; }));
  }
  for (int i = 0; i < kSteps; i += 2) d.Remove(ids[i]);
  for (int i = 0; i < 100 && d.size() > 0; ++i) std::this_thread::sleep_for(20ms);
  REQUIRE(d.size() == 0);
  for (int i = 0; i < kSteps; ++i) {
    INFO(i);
    CHECK(fired[i] == (i % 2 == 0 ? 0 : 1));
  }
}

TEST_CASE("Remove from inside the firing deadline returns at once") {
  StepDeadlines d;
  std::promise<void> done;
  StepDeadlines::Id id = 0;
  std::atomic<bool> added{false};
  id = d.Add(Clock::now() + 10ms, [&] {
    while (!added) std::this_thread::yield();
    d.Remove(id);  // as a step cancelled by its deadline does when it ends
    d.Add(Clock::now() + 1h, [] {});  // and adding from here works too
    done.set_value();
  });
  added = true;
  CHECK(done.get_future().wait_for(5s) == std::future_status::ready);
}

TEST_CASE("Remove waits for a deadline firing on the deadlines thread") {
  StepDeadlines d;
  std::atomic<bool> started{false}, finished{false};
  const auto id = d.Add(Clock::now(), [&] {
    started = true;
    std::this_thread::sleep_for(100ms);
    finished = true;
  });
  while (!started) std::this_thread::yield();
  d.Remove(id);
  CHECK(finished);
}

}  // namespace
}  // namespace tfd
