#include "daemon/runtime/local_rendezvous.h"

#include <vector>

namespace tfd {

void LocalRendezvous::CancelWaiter(int64_t step_id, const std::string& key, const Status& why) {
  std::optional<Waiter> waiter;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto s = steps_.find(step_id);
    if (s == steps_.end()) return;
    auto it = s->second.slots.find(key);
    if (it == s->second.slots.end() || !it->second.waiter) return;
    waiter = std::move(it->second.waiter);
    s->second.slots.erase(it);
  }
  const Status reason = why.ok() ? errors::Cancelled("step cancelled") : why;
  waiter->done(Status(reason.code(), reason.message() + "; while receiving '" + key + "'"));
}

Status LocalRendezvous::Send(int64_t step_id, const std::string& key, const Tensor& tensor) {
  std::optional<Waiter> waiter;
  {
    std::lock_guard<std::mutex> lock(mu_);
    StepTable& step = steps_[step_id];
    if (!step.aborted.ok()) return step.aborted;
    Slot& slot = step.slots[key];
    if (slot.tensor) return errors::Internal("tensor '", key, "' sent twice in step ", step_id);
    if (slot.waiter) {
      waiter = std::move(slot.waiter);
      step.slots.erase(key);
    } else {
      slot.tensor = tensor;
    }
  }
  if (waiter) {
    // Only a waiter whose cancellation has not started may be completed here.
    if (waiter->token && !waiter->cancellation->Deregister(*waiter->token)) return OkStatus();
    waiter->done(tensor);
  }
  return OkStatus();
}

std::optional<StatusOr<Tensor>> LocalRendezvous::TakeOrPark(int64_t step_id,
                                                            const std::string& key,
                                                            Waiter& waiter) {
  std::lock_guard<std::mutex> lock(mu_);
  StepTable& step = steps_[step_id];
  if (!step.aborted.ok()) return StatusOr<Tensor>(step.aborted);
  Slot& slot = step.slots[key];
  if (slot.tensor) {
    Tensor t = std::move(*slot.tensor);
    step.slots.erase(key);
    return StatusOr<Tensor>(std::move(t));
  }
  if (slot.waiter) {
    return StatusOr<Tensor>(errors::Internal("tensor '", key, "' received twice in step ", step_id));
  }
  slot.waiter = std::move(waiter);
  return std::nullopt;
}

void LocalRendezvous::RecvAsync(int64_t step_id, const std::string& key,
                                CancellationManager& cancellation, RecvCallback done) {
  // Register first, so a cancellation racing with the arrival is seen by
  // exactly one side: whoever removes the waiter from the table completes it.
  auto token = cancellation.Register(
      [this, step_id, key](const Status& why) { CancelWaiter(step_id, key, why); });
  if (!token) {
    Status why = cancellation.reason();
    done(why.ok() ? errors::Cancelled("step cancelled") : why);
    return;
  }
  Waiter waiter{std::move(done), &cancellation, token};
  auto now = TakeOrPark(step_id, key, waiter);
  if (!now) {
    // A cancellation that ran between Register and the waiter being placed
    // found nothing to complete; complete the waiter here instead.
    if (cancellation.cancelled()) CancelWaiter(step_id, key, cancellation.reason());
    return;
  }
  cancellation.Deregister(*token);
  waiter.done(std::move(*now));
}

void LocalRendezvous::RecvAsync(int64_t step_id, const std::string& key, RecvCallback done) {
  Waiter waiter{std::move(done), nullptr, std::nullopt};
  if (auto now = TakeOrPark(step_id, key, waiter)) waiter.done(std::move(*now));
}

void LocalRendezvous::Abort(int64_t step_id, const Status& status) {
  std::vector<Waiter> waiters;
  {
    std::lock_guard<std::mutex> lock(mu_);
    StepTable& step = steps_[step_id];
    if (!step.aborted.ok()) return;
    step.aborted = status.ok() ? errors::Aborted("step ", step_id, " aborted") : status;
    for (auto& [key, slot] : step.slots) {
      if (slot.waiter) waiters.push_back(std::move(*slot.waiter));
    }
    step.slots.clear();
  }
  for (Waiter& w : waiters) {
    if (w.token && !w.cancellation->Deregister(*w.token)) continue;
    w.done(status);
  }
}

void LocalRendezvous::Cleanup(int64_t step_id) {
  std::vector<Waiter> waiters;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = steps_.find(step_id);
    if (it == steps_.end()) return;
    for (auto& [key, slot] : it->second.slots) {
      if (slot.waiter) waiters.push_back(std::move(*slot.waiter));
    }
    steps_.erase(it);
  }
  for (Waiter& w : waiters) {
    if (w.token && !w.cancellation->Deregister(*w.token)) continue;
    w.done(errors::Aborted("step ", step_id, " ended before its tensor arrived"));
  }
}

size_t LocalRendezvous::num_steps() const {
  std::lock_guard<std::mutex> lock(mu_);
  return steps_.size();
}

}  // namespace tfd
