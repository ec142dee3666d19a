// LoginThrottle: counts failed logins per peer address, and refuses an
// address that failed too often lately, before its token is looked at.
// A sliding window: an address is refused while it has `max_failures`
// failures younger than `window`, until the oldest of them ages out.
//
//   LoginThrottle throttle(10, std::chrono::seconds(60));
//   if (auto wait = throttle.Blocked("10.0.0.7", now)) refuse ("retry in *wait");
//   else if (token is wrong) throttle.Failed("10.0.0.7", now);
//
// Memory: at most `max_failures` times per address that failed within the
// window, and at most kMaxAddresses addresses (the oldest failures go
// first), so a scan from many addresses cannot grow it without bound.
//
// Thread-safety: none; TaskServer keeps it on the event-loop thread.
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <optional>
#include <string>

namespace tfd {

class LoginThrottle {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr size_t kMaxAddresses = 10000;

  LoginThrottle(int max_failures, std::chrono::milliseconds window)
      : max_failures_(max_failures), window_(window) {}

  // How long `address` must wait before its next login is looked at; nullopt
  // when it may try now.
  std::optional<std::chrono::milliseconds> Blocked(const std::string& address, Clock::time_point now);
  // Records a failed login from `address`.
  void Failed(const std::string& address, Clock::time_point now);

  size_t addresses() const { return failures_.size(); }

 private:
  using Failures = std::map<std::string, std::deque<Clock::time_point>>;  // oldest first

  // Drops the failures at `it` that left the window; erases the entry and
  // returns false when none is left.
  bool Expire(Failures::iterator it, Clock::time_point now);

  const int max_failures_;
  const std::chrono::milliseconds window_;
  Failures failures_;
};

}  // namespace tfd
