#include "daemon/distributed/login_throttle.h"

#include <algorithm>

namespace tfd {
namespace {

// The queue is swept of cancelled entries when it has doubled since the last
// sweep, and not before it holds this many: amortized O(1) per failure.
constexpr size_t kMinSweep = 64;
// Beyond this an address's count only grows the backoff past its cap.
constexpr int kMaxCounted = 64;

}  // namespace

LoginThrottle::LoginThrottle(kj::Timer& timer, Options options)
    : timer_(timer),
      options_(options),
      interval_(options.rate > 0 ? kj::SECONDS / options.rate : 0 * kj::SECONDS),
      tolerance_(options.rate > 0 ? interval_ * (options.rate - 1) : 0 * kj::SECONDS),
      next_slot_(timer.now()),
      sweep_at_(kMinSweep) {}

kj::Duration LoginThrottle::Backoff(int failures) const {
  if (failures <= options_.free_failures) return 0 * kj::SECONDS;
  kj::Duration backoff = options_.first_backoff;
  for (int i = options_.free_failures + 1; i < failures && backoff < options_.max_backoff; ++i) {
    backoff = backoff * 2;
  }
  return kj::min(backoff, options_.max_backoff);
}

kj::Duration LoginThrottle::Record(const std::string& address, kj::TimePoint now) {
  // Forget the addresses quiet for long enough; they are the least recent.
  while (!recency_.empty()) {
    auto quiet = addresses_.find(recency_.front());
    if (now - quiet->second.last < options_.forget_after) break;
    addresses_.erase(quiet);
    recency_.pop_front();
  }
  auto [it, inserted] = addresses_.try_emplace(address);
  Address& a = it->second;
  if (inserted) {
    if (addresses_.size() > kMaxAddresses) {
      addresses_.erase(recency_.front());
      recency_.pop_front();
    }
    a.recency = recency_.insert(recency_.end(), address);
  } else {
    recency_.splice(recency_.end(), recency_, a.recency);
  }
  a.failures = std::min(a.failures + 1, kMaxCounted);
  a.last = now;
  return Backoff(a.failures);
}

kj::Promise<void> LoginThrottle::Failed(const std::string& address) {
  const kj::Duration backoff = Record(address, timer_.now());
  if (backoff == 0 * kj::SECONDS) return canceler_.wrap(Pace());
  return canceler_.wrap(timer_.afterDelay(backoff).then([this]() { return Pace(); }));
}

bool LoginThrottle::SlotFree(kj::TimePoint now) const { return next_slot_ - now <= tolerance_; }

void LoginThrottle::TakeSlot(kj::TimePoint now) {
  next_slot_ = kj::max(next_slot_, now) + interval_;
}

kj::Promise<void> LoginThrottle::Pace() {
  if (options_.rate <= 0) return kj::READY_NOW;
  const kj::TimePoint now = timer_.now();
  if (queue_.empty() && SlotFree(now)) {
    TakeSlot(now);
    return kj::READY_NOW;
  }
  if (queue_.size() >= sweep_at_) {
    auto cancelled = [](kj::Own<kj::PromiseFulfiller<void>>& waiter) {
      return !waiter->isWaiting();
    };
    queue_.erase(std::remove_if(queue_.begin(), queue_.end(), cancelled), queue_.end());
    sweep_at_ = std::max(kMinSweep, 2 * queue_.size());
  }
  auto paf = kj::newPromiseAndFulfiller<void>();
  queue_.push_back(kj::mv(paf.fulfiller));
  if (!pumping_) {
    pumping_ = true;
    pump_ = Pump().eagerlyEvaluate(nullptr);
  }
  return kj::mv(paf.promise);
}

kj::Promise<void> LoginThrottle::Pump() {
  return timer_.atTime(next_slot_ - tolerance_).then([this]() -> kj::Promise<void> {
    const kj::TimePoint now = timer_.now();
    while (!queue_.empty() && SlotFree(now)) {
      auto waiter = kj::mv(queue_.front());
      queue_.pop_front();
      if (!waiter->isWaiting()) continue;  // its login was cancelled: no slot spent
      waiter->fulfill();
      TakeSlot(now);
    }
    if (queue_.empty()) {
      pumping_ = false;
      return kj::READY_NOW;
    }
    return Pump();
  });
}

}  // namespace tfd
