#include "daemon/runtime/local_rendezvous.h"

#include <vector>

#include "common/rendezvous_key.h"

namespace tfd {

void LocalRendezvous::Complete(Waiter waiter, StatusOr<Tensor> value) {
  // Whoever takes a waiter out of the table (under the lock) completes it;
  // its cancellation callback, if it runs now or later, finds nothing there.
  // (Completing one waiter may cancel the step at once, from inside this
  // call: the executor cancels on the first error, so a second waiter must
  // not wait for its own cancellation to complete it.)
  if (waiter.token) waiter.cancellation->Deregister(*waiter.token);
  waiter.done(std::move(value));
}

std::optional<Status> LocalRendezvous::EndedLocked(int64_t step_id) const {
  if (!ended_.Contains(step_id)) return std::nullopt;
  auto it = aborted_.find(step_id);
  if (it != aborted_.end()) return it->second;
  return CleanedUp(step_id);
}

Status LocalRendezvous::CleanedUp(int64_t step_id) {
  return errors::Aborted("step ", step_id, " ended before its tensor arrived");
}

void LocalRendezvous::EndLocked(int64_t step_id, const Status& why, bool aborted,
                                std::vector<Waiter>* waiters) {
  auto it = steps_.find(step_id);
  if (it != steps_.end()) {
    for (auto& [key, slot] : it->second.slots) {
      if (slot.waiter) waiters->push_back(std::move(*slot.waiter));
    }
    steps_.erase(it);
  }
  if (ended_.Contains(step_id)) return;
  ended_.Add(step_id);
  if (!aborted) return;  // CleanedUp says why
  // An abort's reason is what a late receive must report; aborts are rare,
  // so the last kMaxAbortedSteps of them keep theirs.
  aborted_.emplace(step_id, why);
  aborted_order_.push_back(step_id);
  if (aborted_order_.size() > kMaxAbortedSteps) {
    aborted_.erase(aborted_order_.front());
    aborted_order_.pop_front();
  }
}

void LocalRendezvous::EraseSlotLocked(std::map<int64_t, StepTable>::iterator step,
                                      const std::string& key) {
  step->second.slots.erase(key);
  // A collective's transfers (step ids below zero) have a step of their own
  // that nobody ends: its table goes once empty rather than when reaped.
  if (step->first < 0 && step->second.slots.empty()) steps_.erase(step);
}

void LocalRendezvous::CancelWaiter(int64_t step_id, const std::string& key, const Status& why) {
  std::optional<Waiter> waiter;
  {
    MutexLock lock(mu_);
    auto s = steps_.find(step_id);
    if (s == steps_.end()) return;
    auto it = s->second.slots.find(key);
    if (it == s->second.slots.end() || !it->second.waiter) return;
    waiter = std::move(it->second.waiter);
    EraseSlotLocked(s, key);
  }
  const Status reason = why.ok() ? errors::Cancelled("step cancelled") : why;
  waiter->done(Status(reason.code(), reason.message() + "; while receiving " +
                                         DescribeRendezvousKey(key)));
}

Status LocalRendezvous::Put(int64_t step_id, const std::string& key, StatusOr<Tensor> value,
                            std::optional<Waiter>* waiter) {
  if (auto ended = EndedLocked(step_id)) return *ended;
  auto step = steps_.try_emplace(step_id).first;
  step->second.touched = Clock::now();
  Slot& slot = step->second.slots[key];
  if (slot.value) {
    return errors::Internal(DescribeRendezvousKey(key), " sent twice in step ", step_id);
  }
  if (slot.waiter) {
    // The caller completes the waiter, with its own copy of the value.
    *waiter = std::move(slot.waiter);
    EraseSlotLocked(step, key);
    return OkStatus();
  }
  slot.value = std::move(value);
  return OkStatus();
}

Status LocalRendezvous::Send(int64_t step_id, const std::string& key, const Tensor& tensor) {
  std::optional<Waiter> waiter;
  {
    MutexLock lock(mu_);
    TFD_RETURN_IF_ERROR(Put(step_id, key, tensor, &waiter));
  }
  if (waiter) Complete(std::move(*waiter), tensor);
  return OkStatus();
}

void LocalRendezvous::SendAsync(int64_t step_id, const std::string& key, const Tensor& tensor,
                                CancellationManager&, SendCallback done) {
  done(Send(step_id, key, tensor));
}

void LocalRendezvous::Deliver(int64_t step_id, const std::string& key, StatusOr<Tensor> tensor) {
  std::optional<Waiter> waiter;
  {
    MutexLock lock(mu_);
    // A tensor for a step that ended here is dropped; nobody waits for it.
    if (!Put(step_id, key, tensor, &waiter).ok()) return;
  }
  if (waiter) Complete(std::move(*waiter), std::move(tensor));
}

std::optional<StatusOr<Tensor>> LocalRendezvous::TakeOrPark(int64_t step_id,
                                                            const std::string& key,
                                                            Waiter& waiter) {
  MutexLock lock(mu_);
  if (auto ended = EndedLocked(step_id)) return StatusOr<Tensor>(*ended);
  auto step = steps_.try_emplace(step_id).first;
  step->second.touched = Clock::now();
  Slot& slot = step->second.slots[key];
  if (slot.value) {
    StatusOr<Tensor> v = std::move(*slot.value);
    EraseSlotLocked(step, key);
    return v;
  }
  if (slot.waiter) {
    return StatusOr<Tensor>(
        errors::Internal(DescribeRendezvousKey(key), " received twice in step ", step_id));
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

void LocalRendezvous::Abort(int64_t step_id, const Status& status) {
  const Status why = status.ok() ? errors::Aborted("step ", step_id, " aborted") : status;
  std::vector<Waiter> waiters;
  {
    MutexLock lock(mu_);
    if (ended_.Contains(step_id)) return;
    EndLocked(step_id, why, /*aborted=*/true, &waiters);
  }
  for (Waiter& w : waiters) Complete(std::move(w), why);
}

void LocalRendezvous::Cleanup(int64_t step_id) {
  std::vector<Waiter> waiters;
  {
    MutexLock lock(mu_);
    if (ended_.Contains(step_id)) return;
    // A cleanup's reason is not kept (CleanedUp rebuilds it for late
    // arrivals), so EndLocked needs none.
    EndLocked(step_id, OkStatus(), /*aborted=*/false, &waiters);
  }
  // Almost every step ends here with nobody waiting: the message is built
  // only for a waiter that must be told.
  if (waiters.empty()) return;
  const Status why = CleanedUp(step_id);
  for (Waiter& w : waiters) Complete(std::move(w), why);
}

size_t LocalRendezvous::Reap(Clock::time_point before) {
  MutexLock lock(mu_);
  size_t reaped = 0;
  for (auto it = steps_.begin(); it != steps_.end();) {
    bool waiting = false;
    for (const auto& [key, slot] : it->second.slots) waiting = waiting || slot.waiter.has_value();
    if (!waiting && it->second.touched < before) {
      it = steps_.erase(it);
      ++reaped;
    } else {
      ++it;
    }
  }
  return reaped;
}

size_t LocalRendezvous::num_steps() const {
  MutexLock lock(mu_);
  return steps_.size();
}

}  // namespace tfd
