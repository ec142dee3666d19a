// SyncRound: replicas parked until the update they pushed into is applied.
#include "kernels/data_flow/sync_round.h"

#include <algorithm>

#include "kernels/data_flow/accumulator_core.h"

namespace tfd::kernels {

std::string SyncRound::DebugString() const {
  MutexLock lock(mu_);
  return errors::StrCat("sync round '", name_, "': step ", step_, ", ", waiters_.size(),
                        " waiting, ", passes_, " passes");
}

ResourceDescription SyncRound::Describe() const {
  MutexLock lock(mu_);
  return {.kind = "sync_round",
          .gauges = {
              {"step", "The global step of the last update applied.", static_cast<double>(step_)},
              {"waiting", "Replicas waiting for the update they pushed into.",
               static_cast<double>(waiters_.size())}}};
}

int64_t SyncRound::step() const {
  MutexLock lock(mu_);
  return step_;
}

int64_t SyncRound::num_waiting() const {
  MutexLock lock(mu_);
  return static_cast<int64_t>(waiters_.size());
}

void SyncRound::Wait(int64_t pushed_at, CancellationManager* cm, WaitDone done) {
  auto w = std::make_shared<Waiter>(mu_);
  w->pushed_at = pushed_at;
  w->done = std::move(done);
  w->cm = cm;
  // Registered before the waiter is visible, so whoever ends it knows the
  // token to deregister.
  std::optional<CancellationManager::Token> token;
  if (cm != nullptr) {
    token =
        cm->Register([self = shared_from_this(), w](const Status& why) { self->Cancel(w, why); });
    if (!token) return Cancel(w, cm->reason());
  }
  Ready ready;
  {
    MutexLock lock(mu_);
    HeldAs same(Held(mu_), w->mu);
    if (w->finished) return;  // cancelled meanwhile; the callback has run
    w->token = token;
    if (step_ > pushed_at || passes_ > 0) {
      if (step_ <= pushed_at) --passes_;
      FinishLocked(w, OkStatus(), ready);
    } else {
      waiters_.push_back(w);
    }
  }
  for (auto& r : ready) r();
}

void SyncRound::Advance(int64_t step) {
  SetStep(step, [step](const Waiter& w) { return w.pushed_at < step; });
}

void SyncRound::Reset(int64_t step) {
  SetStep(step, [](const Waiter&) { return true; });
}

void SyncRound::SetStep(int64_t step, const std::function<bool(const Waiter&)>& wakes) {
  Ready ready;
  {
    MutexLock lock(mu_);
    step_ = step;
    passes_ = 0;
    WakeLocked(wakes, ready);
  }
  for (auto& r : ready) r();
}

void SyncRound::Release(int64_t step, int64_t passes) {
  Ready ready;
  {
    MutexLock lock(mu_);
    step_ = step;
    const auto woken = static_cast<int64_t>(waiters_.size());
    WakeLocked([](const Waiter&) { return true; }, ready);
    passes_ = std::max<int64_t>(0, passes - woken);
  }
  for (auto& r : ready) r();
}

void SyncRound::WakeLocked(const std::function<bool(const Waiter&)>& wakes, Ready& ready) {
  for (auto it = waiters_.begin(); it != waiters_.end();) {
    if (!wakes(**it)) {
      ++it;
      continue;
    }
    FinishLocked(*it, OkStatus(), ready);
    it = waiters_.erase(it);
  }
}

void SyncRound::FinishLocked(const WaiterPtr& w, Status s, Ready& ready) {
  HeldAs same(Held(mu_), w->mu);
  w->finished = true;
  ready.push_back([w, s = std::move(s), token = w->token, step = step_]() {
    // False when cancellation is running its callback concurrently; that
    // finds the waiter finished and does nothing.
    if (token) w->cm->Deregister(*token);
    WaitDone done = std::move(w->done);
    done(s, step);
  });
}

void SyncRound::Cancel(const WaiterPtr& w, const Status& why) {
  Ready ready;
  {
    MutexLock lock(mu_);
    HeldAs same(Held(mu_), w->mu);
    if (w->finished) return;
    waiters_.remove(w);
    w->token.reset();  // the cancellation manager already dropped it
    FinishLocked(w,
                 AccumulatorWaitCancelled(
                     why, errors::StrCat("waiting in sync round '", name_,
                                         "' for the update after global step ", w->pushed_at,
                                         " (last applied: step ", step_, ")")),
                 ready);
  }
  for (auto& r : ready) r();
}

}  // namespace tfd::kernels
