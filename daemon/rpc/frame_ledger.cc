#include "daemon/rpc/frame_ledger.h"

#include <fmt/format.h>

#include <string>

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

std::string Seconds(kj::Duration d) {
  return fmt::format("{:g}", static_cast<double>(d / kj::MILLISECONDS) / 1000);
}

}  // namespace

FrameLedger::FrameLedger(kj::Timer& timer, std::shared_ptr<MemoryBudget> budget,
                         kj::Duration max_wait, uint64_t connection_bytes)
    : timer_(timer),
      budget_(std::move(budget)),
      connection_(connection_bytes > 0 ? std::make_shared<MemoryBudget>(connection_bytes)
                                       : nullptr),
      max_wait_(max_wait) {}

kj::Promise<void> FrameLedger::Reserve(uint64_t bytes) {
  if (budget_ != nullptr && bytes > budget_->limit()) {
    return KjFromStatus(errors::ResourceExhausted(
        "sent a frame of ", FormatBytes(bytes), ", more than the task's whole memory budget of ",
        FormatBytes(budget_->limit()), " (--memory-budget)"));
  }
  return TryUntil(bytes, timer_.now() + max_wait_, kFirstPause);
}

StatusOr<FrameLedger::Charge> FrameLedger::TryCharge(uint64_t bytes) {
  // The connection's own bound first: a connection over it waits for its
  // own messages to go, not holding the task's bytes meanwhile.
  auto connection = MemoryCharge::Take(connection_, bytes);
  if (!connection.ok()) {
    return errors::ResourceExhausted(
        "sent a frame of ", FormatBytes(bytes), ", which found no room beside its connection's "
        "other frames for ", Seconds(max_wait_), " s: ", FormatBytes(connection_->used()),
        " of the ", FormatBytes(connection_->limit()),
        " one connection's frames may hold (--max-message-bytes)");
  }
  auto task = MemoryCharge::Take(budget_, bytes);
  if (!task.ok()) {
    return errors::ResourceExhausted(
        "sent a frame of ", FormatBytes(bytes), ", which found no room in the task's memory "
        "budget for ", Seconds(max_wait_), " s: ", FormatBytes(budget_->used()), " of ",
        FormatBytes(budget_->limit()), " in use (--memory-budget)");
  }
  return Charge{std::move(task).value(), std::move(connection).value()};
}

kj::Promise<void> FrameLedger::TryUntil(uint64_t bytes, kj::TimePoint deadline,
                                        kj::Duration pause) {
  auto charge = TryCharge(bytes);
  if (charge.ok()) {
    pending_.push_back(std::move(charge).value());
    return kj::READY_NOW;
  }
  const kj::TimePoint now = timer_.now();
  if (now >= deadline) return KjFromStatus(charge.status());
  return timer_.atTime(kj::min(now + pause, deadline)).then([this, bytes, deadline, pause]() {
    return TryUntil(bytes, deadline, kj::min(pause * 2, kLongestPause));
  });
}

kj::Own<FrameLedger::Charge> FrameLedger::TakeNext() {
  if (pending_.empty()) return kj::heap<Charge>();
  auto charge = kj::heap<Charge>(std::move(pending_.front()));
  pending_.pop_front();
  return charge;
}

}  // namespace tfd
