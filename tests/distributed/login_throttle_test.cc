// LoginThrottle: an address is refused once it failed max_failures times
// within the window, told how long to wait, free again when the oldest
// failure ages out, and refused again after more failures; addresses are
// independent; 0 means no limit; the books stay bounded.
#include "daemon/distributed/login_throttle.h"

#include <catch2/catch.hpp>

namespace tfd {
namespace {

using namespace std::chrono_literals;
using Clock = LoginThrottle::Clock;

TEST_CASE("refused after max_failures within the window, free when the oldest ages out, refused again") {
  LoginThrottle throttle(3, 60s);
  const Clock::time_point t0{};
  throttle.Failed("10.0.0.7", t0);
  throttle.Failed("10.0.0.7", t0 + 10s);
  CHECK_FALSE(throttle.Blocked("10.0.0.7", t0 + 11s));
  throttle.Failed("10.0.0.7", t0 + 20s);
  auto wait = throttle.Blocked("10.0.0.7", t0 + 21s);
  REQUIRE(wait);
  CHECK(*wait == 39s);  // until the failure at t0 is 60 s old
  CHECK_FALSE(throttle.Blocked("10.0.0.8", t0 + 21s));

  // Free once the first failure left the window; two remain.
  CHECK_FALSE(throttle.Blocked("10.0.0.7", t0 + 60s));
  throttle.Failed("10.0.0.7", t0 + 61s);
  auto again = throttle.Blocked("10.0.0.7", t0 + 62s);
  REQUIRE(again);
  CHECK(*again == 8s);  // until the failure at t0 + 10s ages out

  // Long quiet: forgotten altogether.
  CHECK_FALSE(throttle.Blocked("10.0.0.7", t0 + 200s));
  CHECK(throttle.addresses() == 0);
}

TEST_CASE("max_failures 0 never refuses") {
  LoginThrottle throttle(0, 60s);
  for (int i = 0; i < 100; ++i) throttle.Failed("10.0.0.7", Clock::time_point{} + i * 1ms);
  CHECK_FALSE(throttle.Blocked("10.0.0.7", Clock::time_point{} + 1s));
}

TEST_CASE("failures from very many addresses keep the books bounded") {
  LoginThrottle throttle(2, 60s);
  const Clock::time_point t0{};
  for (size_t i = 0; i < LoginThrottle::kMaxAddresses + 100; ++i) {
    throttle.Failed("a" + std::to_string(i), t0 + std::chrono::microseconds(i));
  }
  CHECK(throttle.addresses() == LoginThrottle::kMaxAddresses);
  // The newest are remembered.
  const std::string last = "a" + std::to_string(LoginThrottle::kMaxAddresses + 99);
  throttle.Failed(last, t0 + 1s);
  CHECK(throttle.Blocked(last, t0 + 1s));
}

}  // namespace
}  // namespace tfd
