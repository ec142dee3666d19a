#include "daemon/rpc/frame_ledger.h"

#include <fmt/format.h>

#include "common/size_limits.h"
#include "daemon/rpc/kj_status.h"

namespace tfd {
namespace {

// How often a frame that found no room tries again. Memory comes back on any
// thread (kernels' tensors die on the compute pool) without a word to the
// loop; a look every few tens of milliseconds costs nothing next to the
// frame that waits, and the pause grows so that a long wait costs little.
constexpr kj::Duration kFirstPause = 2 * kj::MILLISECONDS;
constexpr kj::Duration kLongestPause = 100 * kj::MILLISECONDS;

}  // namespace

FrameLedger::FrameLedger(kj::Timer& timer, std::shared_ptr<MemoryBudget> budget,
                         kj::Duration max_wait)
    : timer_(timer), budget_(std::move(budget)), max_wait_(max_wait) {}

kj::Promise<void> FrameLedger::Reserve(uint64_t bytes) {
  if (budget_ != nullptr && bytes > budget_->limit()) {
    return KjFromStatus(errors::ResourceExhausted(
        "sent a frame of ", FormatBytes(bytes), ", more than the task's whole memory budget of ",
        FormatBytes(budget_->limit()), " (--memory-budget)"));
  }
  return TryUntil(bytes, timer_.now() + max_wait_, kFirstPause);
}

kj::Promise<void> FrameLedger::TryUntil(uint64_t bytes, kj::TimePoint deadline,
                                        kj::Duration pause) {
  auto charge = MemoryCharge::Take(budget_, bytes);
  if (charge.ok()) {
    pending_.push_back(std::move(charge).value());
    return kj::READY_NOW;
  }
  const kj::TimePoint now = timer_.now();
  if (now >= deadline) {
    return KjFromStatus(errors::ResourceExhausted(
        "sent a frame of ", FormatBytes(bytes), ", which found no room in the task's memory "
        "budget for ", fmt::format("{:g}", static_cast<double>(max_wait_ / kj::MILLISECONDS) / 1000),
        " s: ", FormatBytes(budget_->used()), " of ", FormatBytes(budget_->limit()),
        " in use (--memory-budget)"));
  }
  return timer_.atTime(kj::min(now + pause, deadline)).then([this, bytes, deadline, pause]() {
    return TryUntil(bytes, deadline, kj::min(pause * 2, kLongestPause));
  });
}

kj::Own<MemoryCharge> FrameLedger::TakeNext() {
  if (pending_.empty()) return kj::heap<MemoryCharge>();
  auto charge = kj::heap<MemoryCharge>(std::move(pending_.front()));
  pending_.pop_front();
  return charge;
}

uint64_t FrameLedger::pending_bytes() const {
  uint64_t total = 0;
  for (const MemoryCharge& c : pending_) total += c.bytes();
  return total;
}

}  // namespace tfd
