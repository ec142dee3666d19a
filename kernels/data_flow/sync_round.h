// SyncRound: where the replicas of synchronous training wait for the update
// their gradients went into (api/sync_replicas.h). One lives beside
// global_step; the chief advances it after each applied update.
//
// TensorFlow parks its replicas on a FIFO queue of tokens, one per replica
// per update. A token fits any replica, so a fast replica that pushed into
// update k+1 can take the token meant for a slower one that pushed into
// update k; with an accumulator that counts each replica once per update
// (accumulator_core.h), the slower replica then waits for update k+1, which
// waits for its gradient, until the step deadline. Here a replica waits for
// the update its own gradients joined: Wait(pushed_at) ends once the round
// has passed the global step its gradients were tagged with, which no other
// replica can take from it.
//
//   auto round = std::make_shared<SyncRound>("sync/round");
//   round->Reset(0);                             // the chief's init
//   round->Wait(0, &cm, done);                   // a replica that pushed at
//   step 0 parks round->Advance(1);                           // the chief
//   applied update 0: done(OK, 1) round->Wait(0, &cm, done); // late: done(OK,
//   1) at once
//
// Never checkpointed: the chief's init resets it to the restored step.
//
// Thread-safety: every method may be called from any thread; callbacks run
// outside the lock, on the thread that caused the event.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/cancellation.h"
#include "common/mutex.h"
#include "common/status.h"
#include "kernels/framework/resource.h"

namespace tfd::kernels {

class SyncRound final : public Resource, public std::enable_shared_from_this<SyncRound> {
 public:
  // The step to go on from, or the cancellation's code and why.
  using WaitDone = std::function<void(const Status&, int64_t step)>;

  explicit SyncRound(std::string name) : name_(std::move(name)) {}

  std::string_view Kind() const override { return "sync round"; }
  // "sync round 'sync/round': step 7, 3 waiting, 0 passes".
  std::string DebugString() const override;
  // tfd_sync_round_step and tfd_sync_round_waiting on /metrics.
  ResourceDescription Describe() const override;

  const std::string& name() const { return name_; }
  int64_t step() const;
  int64_t num_waiting() const;

  // A replica whose gradients were tagged `pushed_at`: `done` gets the
  // round's step at once when it is past pushed_at (the update those
  // gradients joined is applied, or they were stale) or a pass from Release
  // is left, else at the first Advance past pushed_at, Reset or Release. If
  // `cm` (may be null) cancels first, with its code (DEADLINE_EXCEEDED at
  // the step deadline) and what was waited for.
  void Wait(int64_t pushed_at, CancellationManager* cm, WaitDone done);
  // The chief applied the update that made global step `step`: the waiters
  // that pushed below it go on. Spends what Release left.
  void Advance(int64_t step);
  // The chief (re)starts at global step `step` (its init, perhaps after a
  // restore): every waiter goes on, to push again at the step it reads then
  // (a gradient still held is not counted twice), since the update it
  // waited for may have been lost with the chief that took it.
  void Reset(int64_t step);
  // The chief stops at `step`: every waiter goes on, and so do the next
  // waits until `passes` in all went by, each with `step`, so that every
  // replica still running sees where training ended.
  void Release(int64_t step, int64_t passes);

 private:
  struct Waiter {
    explicit Waiter(Mutex& round_mu) : mu(round_mu) {}
    Mutex& mu;  // the round's mu_, which guards the fields below
    int64_t pushed_at = 0;
    WaitDone done;
    CancellationManager* cm = nullptr;
    std::optional<CancellationManager::Token> token GUARDED_BY(mu);
    bool finished GUARDED_BY(mu) = false;
  };
  using WaiterPtr = std::shared_ptr<Waiter>;
  using Ready = std::vector<std::function<void()>>;

  // Advance and Reset: the round at `step`, passes spent, the waiters
  // `wakes` picks ended.
  void SetStep(int64_t step, const std::function<bool(const Waiter&)>& wakes);
  // Ends the waiters `wakes` picks with `step_`.
  void WakeLocked(const std::function<bool(const Waiter&)>& wakes, Ready& ready) REQUIRES(mu_);
  void FinishLocked(const WaiterPtr& w, Status s, Ready& ready) REQUIRES(mu_);
  void Cancel(const WaiterPtr& w, const Status& why);

  const std::string name_;
  mutable Mutex mu_;
  int64_t step_ GUARDED_BY(mu_) = 0;
  int64_t passes_ GUARDED_BY(mu_) = 0;
  std::list<WaiterPtr> waiters_ GUARDED_BY(mu_);
};

}  // namespace tfd::kernels
