// LocalRendezvous: a task's table of tensors in flight, per step.
//
// _Send kernels and remote recvTensor requests meet here: whichever comes
// first waits for the other. A step aborted on this task fails its waiters
// and every later receive with the abort's status; Cleanup forgets a step.
//
//   rendezvous.Send(step, key, t);
//   rendezvous.RecvAsync(step, key, cm, [](StatusOr<Tensor> t) {...});
//
// Thread-safety: every method may be called from any thread; callbacks run
// outside the lock on the thread that completes them.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "common/rendezvous.h"

namespace tfd {

class LocalRendezvous : public Rendezvous {
 public:
  Status Send(int64_t step_id, const std::string& key, const Tensor& tensor) override;
  void RecvAsync(int64_t step_id, const std::string& key, CancellationManager& cancellation,
                 RecvCallback done) override;
  // Receive without a CancellationManager (for RPC handlers, which are
  // cancelled by Abort or by dropping their promise).
  void RecvAsync(int64_t step_id, const std::string& key, RecvCallback done);

  void Abort(int64_t step_id, const Status& status);
  void Cleanup(int64_t step_id);
  size_t num_steps() const;

 private:
  struct Waiter {
    RecvCallback done;
    CancellationManager* cancellation = nullptr;
    std::optional<CancellationManager::Token> token;
  };
  struct Slot {
    std::optional<Tensor> tensor;
    std::optional<Waiter> waiter;
  };
  struct StepTable {
    Status aborted;
    std::map<std::string, Slot> slots;
  };

  void CancelWaiter(int64_t step_id, const std::string& key, const Status& why);
  // Under the lock: the tensor if it has arrived, the step's abort status,
  // or — returning nullopt — `waiter` parked until Send, Abort or Cleanup.
  std::optional<StatusOr<Tensor>> TakeOrPark(int64_t step_id, const std::string& key,
                                             Waiter& waiter);

  mutable std::mutex mu_;
  std::map<int64_t, StepTable> steps_;  // guarded by mu_
};

}  // namespace tfd
