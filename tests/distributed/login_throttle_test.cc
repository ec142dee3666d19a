// LoginThrottle, on a timer the test moves: an address's first failures are
// answered at once, later ones after a backoff that doubles up to its cap,
// and start over once the address has been quiet; another address is not
// held up by it; across all addresses at most `rate` failures are answered
// a second, in order, and one cancelled while it waits gives its slot to
// the next; the books stay bounded; once the throttle is gone its promises
// fail instead of hanging.
#include "daemon/distributed/login_throttle.h"

#include <catch2/catch.hpp>
#include <kj/async.h>
#include <kj/timer.h>

#include <memory>
#include <optional>
#include <vector>

namespace tfd {
namespace {

using Options = LoginThrottle::Options;

struct Loop {
  kj::EventLoop loop;
  kj::WaitScope ws{loop};
  kj::TimerImpl timer{kj::origin<kj::TimePoint>()};

  // Moves the clock on by `d`, stopping at each timer on the way (as a
  // real event loop would see them) and running what became ready.
  void Advance(kj::Duration d) {
    const kj::TimePoint target = timer.now() + d;
    for (;;) {
      ws.poll();
      KJ_IF_MAYBE(next, timer.nextEvent()) {
        if (*next <= target) {
          timer.advanceTo(kj::max(*next, timer.now()));
          continue;
        }
      }
      break;
    }
    timer.advanceTo(target);
    ws.poll();
  }
  bool Ready(kj::Promise<void>& p) { return p.poll(ws); }
  // How many of `ps` have resolved.
  int CountReady(std::vector<kj::Promise<void>>& ps) {
    int n = 0;
    for (auto& p : ps) n += Ready(p) ? 1 : 0;
    return n;
  }
};

TEST_CASE("the backoff: none for the free failures, then from first_backoff doubling to its cap") {
  Loop l;
  LoginThrottle throttle(l.timer, {.free_failures = 3,
                                   .first_backoff = 100 * kj::MILLISECONDS,
                                   .max_backoff = 1 * kj::SECONDS});
  for (int n = 1; n <= 3; ++n) CHECK(throttle.Backoff(n) == 0 * kj::SECONDS);
  CHECK(throttle.Backoff(4) == 100 * kj::MILLISECONDS);
  CHECK(throttle.Backoff(5) == 200 * kj::MILLISECONDS);
  CHECK(throttle.Backoff(6) == 400 * kj::MILLISECONDS);
  CHECK(throttle.Backoff(7) == 800 * kj::MILLISECONDS);
  CHECK(throttle.Backoff(8) == 1 * kj::SECONDS);
  CHECK(throttle.Backoff(64) == 1 * kj::SECONDS);
}

TEST_CASE("an address's failures back off, others' do not wait for them, and quiet it starts "
          "over") {
  Loop l;
  LoginThrottle throttle(l.timer,
                         {.free_failures = 3, .forget_after = 60 * kj::SECONDS, .rate = 0});
  for (int i = 0; i < 3; ++i) {
    auto answer = throttle.Failed("10.0.0.7");
    CHECK(l.Ready(answer));
  }
  auto fourth = throttle.Failed("10.0.0.7");
  CHECK_FALSE(l.Ready(fourth));
  auto stranger = throttle.Failed("10.0.0.8");  // its first: not held up by 10.0.0.7
  CHECK(l.Ready(stranger));
  l.Advance(99 * kj::MILLISECONDS);
  CHECK_FALSE(l.Ready(fourth));
  l.Advance(1 * kj::MILLISECONDS);
  CHECK(l.Ready(fourth));
  fourth.wait(l.ws);  // resolved, not failed

  auto fifth = throttle.Failed("10.0.0.7");
  l.Advance(199 * kj::MILLISECONDS);
  CHECK_FALSE(l.Ready(fifth));
  l.Advance(1 * kj::MILLISECONDS);
  CHECK(l.Ready(fifth));

  // Failures keep it remembered; a quiet minute forgets it.
  l.Advance(59 * kj::SECONDS);
  auto still = throttle.Failed("10.0.0.7");
  CHECK_FALSE(l.Ready(still));
  l.Advance(60 * kj::SECONDS);
  CHECK(l.Ready(still));
  auto again = throttle.Failed("10.0.0.7");
  CHECK(l.Ready(again));
  CHECK(throttle.addresses() == 1);  // 10.0.0.8 was forgotten on the way
}

TEST_CASE("at most `rate` failures are answered a second in all, in order, after a burst of as "
          "many") {
  Loop l;
  LoginThrottle throttle(l.timer, {.rate = 2});
  std::vector<kj::Promise<void>> answers;
  // Six addresses, one failure each: no backoff, only the global pace.
  for (int i = 0; i < 6; ++i) answers.push_back(throttle.Failed("10.0.0." + std::to_string(i)));
  CHECK(l.CountReady(answers) == 2);  // the burst
  l.Advance(499 * kj::MILLISECONDS);
  CHECK(l.CountReady(answers) == 2);
  for (int next = 2; next < 6; ++next) {
    INFO("answer " << next);
    l.Advance(1 * kj::MILLISECONDS);  // at 500 ms, 1000 ms, ...
    CHECK(l.CountReady(answers) == next + 1);
    CHECK(l.Ready(answers[next]));
    l.Advance(499 * kj::MILLISECONDS);
    CHECK(l.CountReady(answers) == next + 1);
  }
  // A second of quiet refills the burst.
  l.Advance(1 * kj::SECONDS);
  auto a = throttle.Failed("10.0.1.1");
  auto b = throttle.Failed("10.0.1.2");
  CHECK(l.Ready(a));
  CHECK(l.Ready(b));
}

TEST_CASE("a failure cancelled while it waits for the pace gives its slot to the next") {
  Loop l;
  LoginThrottle throttle(l.timer, {.rate = 1});
  auto first = throttle.Failed("10.0.0.1");
  CHECK(l.Ready(first));
  std::optional<kj::Promise<void>> gone = throttle.Failed("10.0.0.2");
  auto third = throttle.Failed("10.0.0.3");
  CHECK_FALSE(l.Ready(*gone));
  CHECK_FALSE(l.Ready(third));
  gone.reset();  // its connection closed
  l.Advance(1 * kj::SECONDS);
  CHECK(l.Ready(third));  // at the second slot, not the third
}

TEST_CASE("the books stay bounded: addresses, least recent out first, and the waiting queue") {
  Loop l;
  LoginThrottle throttle(l.timer, {.free_failures = 3, .rate = 0});
  for (int i = 0; i < 3; ++i) throttle.Failed("first").poll(l.ws);
  for (size_t i = 0; i < LoginThrottle::kMaxAddresses; ++i) {
    throttle.Failed("a" + std::to_string(i)).poll(l.ws);
  }
  CHECK(throttle.addresses() == LoginThrottle::kMaxAddresses);
  // "first" failed least recently and went: its next failure is free again.
  auto first = throttle.Failed("first");
  CHECK(l.Ready(first));
  // The most recent are remembered: a fourth failure of the last one waits.
  const std::string last = "a" + std::to_string(LoginThrottle::kMaxAddresses - 1);
  for (int i = 0; i < 2; ++i) throttle.Failed(last).poll(l.ws);
  auto fourth = throttle.Failed(last);
  CHECK_FALSE(l.Ready(fourth));

  // Failures whose logins were cancelled do not pile up in the queue.
  LoginThrottle paced(l.timer, {.rate = 1});
  std::vector<kj::Promise<void>> cancelled;
  for (int i = 0; i < 1000; ++i) cancelled.push_back(paced.Failed("c" + std::to_string(i)));
  cancelled.clear();
  std::vector<kj::Promise<void>> live;
  for (int i = 0; i < 100; ++i) live.push_back(paced.Failed("d" + std::to_string(i)));
  CHECK(paced.queued() <= 2 * live.size());
  l.Advance(1 * kj::SECONDS);
  CHECK(l.Ready(live[0]));  // the cancelled ones took no slot
}

TEST_CASE("once the throttle is gone, what it gave out fails rather than waits") {
  Loop l;
  auto throttle = std::make_unique<LoginThrottle>(l.timer, Options{.rate = 1});
  auto paced = throttle->Failed("10.0.0.1");
  auto waiting = throttle->Failed("10.0.0.2");
  for (int i = 0; i < 4; ++i) throttle->Failed("10.0.0.3").poll(l.ws);
  auto backing_off = throttle->Failed("10.0.0.3");
  CHECK_FALSE(l.Ready(waiting));
  CHECK_FALSE(l.Ready(backing_off));
  throttle.reset();
  l.Advance(10 * kj::SECONDS);
  for (auto* p : {&waiting, &backing_off}) {
    REQUIRE(l.Ready(*p));
    CHECK(kj::runCatchingExceptions([&] { p->wait(l.ws); }) != nullptr);
  }
}

}  // namespace
}  // namespace tfd
