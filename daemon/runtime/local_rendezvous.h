// LocalRendezvous: a task's table of tensors in flight, per step.
//
// _Send kernels of this task and tensors pushed here by other tasks meet
// the _Recv kernels waiting for them: whichever comes first waits for the
// other. A tensor may arrive before the step's partition has started here;
// it waits in the step's table.
//
// A step ends here with Abort (the step failed somewhere) or Cleanup (its
// partition here is over). Either way its table goes at once, waiters fail
// with the reason, and the step is remembered for a while (the last
// kMaxEndedSteps of them, in memory taken whole by the first: RecentSteps), so that a
// tensor still on its way for it is dropped on arrival instead of starting a
// new table nobody will empty. An abort's reason is kept for the last
// kMaxAbortedSteps aborts; older ones report that the step ended.
// Tables of steps that never ran here and never ended (a master that died
// before telling us) are dropped by Reap. Step ids below zero are never a
// master's: collectives (kernels/collective/) use them, one per run, and
// never end them; such a table goes as soon as it holds nothing.
//
//   rendezvous.Send(step, key, t);
//   rendezvous.RecvAsync(step, key, cm, [](StatusOr<Tensor> t) {...});
//   rendezvous.Deliver(step, key, pushed);   // a tensor, or why it will not come
//
// Thread-safety: every method may be called from any thread; callbacks run
// outside the lock on the thread that completes them.
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/mutex.h"
#include "common/rendezvous.h"
#include "daemon/runtime/recent_steps.h"

namespace tfd {

class LocalRendezvous : public Rendezvous {
 public:
  static constexpr size_t kMaxEndedSteps = 65536;
  static constexpr size_t kMaxAbortedSteps = 1024;
  using Clock = std::chrono::steady_clock;

  // Hands over a tensor: OK, or the status of a step that ended here.
  Status Send(int64_t step_id, const std::string& key, const Tensor& tensor);
  void SendAsync(int64_t step_id, const std::string& key, const Tensor& tensor,
                 CancellationManager& cancellation, SendCallback done) override;
  void RecvAsync(int64_t step_id, const std::string& key, CancellationManager& cancellation,
                 RecvCallback done) override;

  // A tensor pushed by another task, or why it never will be: an error
  // fails the receive of `key` (now, or when it comes).
  void Deliver(int64_t step_id, const std::string& key, StatusOr<Tensor> tensor);

  void Abort(int64_t step_id, const Status& status);
  void Cleanup(int64_t step_id);
  // Drops the tables of steps last touched before `before` that have no
  // receive waiting (nothing runs for them here); returns how many.
  size_t Reap(Clock::time_point before);

  // Steps with a table (tensors or waiters) now.
  size_t num_steps() const;

 private:
  struct Waiter {
    RecvCallback done;
    CancellationManager* cancellation = nullptr;
    std::optional<CancellationManager::Token> token;
  };
  struct Slot {
    std::optional<StatusOr<Tensor>> value;  // a tensor, or the error it became
    std::optional<Waiter> waiter;
  };
  struct StepTable {
    std::map<std::string, Slot> slots;
    Clock::time_point touched = Clock::now();
  };

  // Under the lock: drops `key`'s slot of `step`, and the table of a
  // collective's step (id below zero) that this leaves empty.
  void EraseSlotLocked(std::map<int64_t, StepTable>::iterator step, const std::string& key)
      REQUIRES(mu_);
  void CancelWaiter(int64_t step_id, const std::string& key, const Status& why);
  // Completes a waiter taken out of the table, outside the lock.
  static void Complete(Waiter waiter, StatusOr<Tensor> value);
  // Under the lock: the value if it has arrived, the status of an ended
  // step, or (returning nullopt) `waiter` parked until it comes.
  std::optional<StatusOr<Tensor>> TakeOrPark(int64_t step_id, const std::string& key,
                                             Waiter& waiter);
  // Under the lock: `value` into its slot, or, when a receive already
  // waits, that waiter moved to `*waiter` for the caller to complete outside
  // the lock with the value it holds.
  Status Put(int64_t step_id, const std::string& key, StatusOr<Tensor> value,
             std::optional<Waiter>* waiter) REQUIRES(mu_);
  // Under the lock: ends the step, moving out its waiters; an abort's
  // reason is kept for late arrivals.
  void EndLocked(int64_t step_id, const Status& why, bool aborted, std::vector<Waiter>* waiters)
      REQUIRES(mu_);
  // The status of an ended step, under the lock; nullopt for one that has
  // not ended (or was forgotten).
  std::optional<Status> EndedLocked(int64_t step_id) const REQUIRES(mu_);
  // What a step that ended with Cleanup reports.
  static Status CleanedUp(int64_t step_id);

  mutable Mutex mu_;
  std::map<int64_t, StepTable> steps_ GUARDED_BY(mu_);
  RecentSteps ended_ GUARDED_BY(mu_){kMaxEndedSteps};
  std::unordered_map<int64_t, Status> aborted_ GUARDED_BY(mu_);  // reasons of recent aborts
  std::deque<int64_t> aborted_order_ GUARDED_BY(mu_);            // oldest first
};

}  // namespace tfd
