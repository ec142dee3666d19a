#include "daemon/distributed/login_throttle.h"

#include <algorithm>

namespace tfd {

bool LoginThrottle::Expire(Failures::iterator it, Clock::time_point now) {
  auto& times = it->second;
  while (!times.empty() && now - times.front() >= window_) times.pop_front();
  if (!times.empty()) return true;
  failures_.erase(it);
  return false;
}

std::optional<std::chrono::milliseconds> LoginThrottle::Blocked(const std::string& address,
                                                                Clock::time_point now) {
  auto it = failures_.find(address);
  if (it == failures_.end() || !Expire(it, now)) return std::nullopt;
  if (static_cast<int>(it->second.size()) < max_failures_) return std::nullopt;
  // Free again once the oldest failure leaves the window.
  const auto free_at = it->second.front() + window_;
  return std::max(std::chrono::milliseconds(1),
                  std::chrono::ceil<std::chrono::milliseconds>(free_at - now));
}

void LoginThrottle::Failed(const std::string& address, Clock::time_point now) {
  if (max_failures_ <= 0) return;
  auto it = failures_.find(address);
  if (it == failures_.end()) {
    if (failures_.size() >= kMaxAddresses) {
      // Full: forget the address whose newest failure is oldest. Linear, but
      // only when ten thousand addresses failed within one window.
      auto stalest = std::min_element(failures_.begin(), failures_.end(), [](auto& a, auto& b) {
        return a.second.back() < b.second.back();
      });
      failures_.erase(stalest);
    }
    it = failures_.emplace(address, std::deque<Clock::time_point>()).first;
  }
  auto& times = it->second;
  times.push_back(now);
  while (static_cast<int>(times.size()) > max_failures_) times.pop_front();
}

}  // namespace tfd
