// ConditionalAccumulator: averages the gradients that synchronous replicas
// send for one variable, held in a task's ResourceMgr so that every worker's
// graph naming it shares it (TensorFlow's ConditionalAccumulator, MEAN).
//
// It keeps a sum, a count and a global step. A gradient computed at a local
// step older than the global step is stale and dropped (a worker that fell
// behind must not pull the model back); a fresh one is added, once per
// replica: a replica's second gradient before the next take (a replica
// whose task restarted and pushed its step again, or one that ran ahead on a
// token left over from a round it missed) is dropped too, so a take always
// averages distinct replicas. A take waits
// until enough gradients are in, hands out their average, empties the
// accumulator and advances the global step — all under one lock, so a
// gradient computed against the old step that arrives after the take is
// stale.
//
// Waiting never parks a thread: a take that finds too few gradients leaves an
// attempt behind and returns; the apply that brings the count up (or the
// step's cancellation) completes it and runs its callback on the thread that
// caused the event, outside the lock. Takers are served in arrival order.
//
//   auto acc = std::make_shared<ConditionalAccumulator>("acc", DType::kFloat32,
//                                                       PartialShape({-1, 10}));
//   acc->TakeAverage(2, &cm, [](const Status& s, Tensor avg) { ... });
//   acc->Apply(/*local_step=*/0, g0, "/job:worker/replica:0/task:0");
//   acc->Apply(0, g1, "/job:worker/replica:0/task:1");  // the take completes
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "common/cancellation.h"
#include "common/mutex.h"
#include "common/resource_mgr.h"
#include "common/tensor.h"

namespace tfd::kernels {

class ConditionalAccumulator : public ResourceBase,
                               public std::enable_shared_from_this<ConditionalAccumulator> {
 public:
  using TakeDone = std::function<void(const Status&, Tensor average)>;

  // What happened to one applied gradient.
  enum class ApplyResult { kAccumulated, kStale, kDuplicate };

  // `dtype` is float32 or float64 (checked by the op's attr); every gradient
  // must fit `shape`.
  ConditionalAccumulator(std::string name, DType dtype, PartialShape shape);

  std::string_view Kind() const override { return "accumulator"; }
  // "accumulator 'acc': float32[?, 10], 2 gradients, global step 7, 1 stale dropped".
  std::string DebugString() const override;

  const std::string& name() const { return name_; }
  DType dtype() const { return dtype_; }
  const PartialShape& shape() const { return shape_; }
  int64_t num_accumulated() const;
  int64_t global_step() const;
  int64_t num_stale_dropped() const;
  int64_t num_duplicates_dropped() const;

  // INVALID_ARGUMENT unless made with exactly these settings (another graph
  // declaring the same shared accumulator differently).
  Status CheckSameSpec(DType dtype, const PartialShape& shape) const;

  // Adds `gradient` when local_step >= the global step, else drops it as
  // stale. `replica` names who computed it (the task whose session ran the
  // step, StepContext::master): a replica that already has a gradient in
  // since the last take is not counted again (kDuplicate); an empty replica
  // (a session in one process) is never taken for a duplicate.
  // INVALID_ARGUMENT (naming both shapes) for a gradient of another dtype, or
  // whose shape does not fit the declared shape or, while any are
  // accumulated, the shape of those; checked for dropped gradients too,
  // since a wrong shape is a bug whatever the step.
  StatusOr<ApplyResult> Apply(int64_t local_step, const Tensor& gradient,
                              std::string_view replica = {});

  // Once at least `num_required` (>= 1) gradients are in: `done` gets their
  // average, the accumulator is emptied and the global step advances by one.
  // With the cancellation's code (saying what it waited for, have and need)
  // if `cm` cancels first.
  void TakeAverage(int64_t num_required, CancellationManager* cm, TakeDone done);

  // Sets the global step (a chief restoring a checkpoint); gradients already
  // accumulated at a lower local step are discarded, and their replicas may
  // contribute again. Returns how many were.
  int64_t SetGlobalStep(int64_t new_global_step);

 private:
  struct TakeAttempt;
  // Gradients applied at one local step: kept apart so SetGlobalStep can drop
  // exactly the ones it makes stale. In steady state there is one bucket.
  struct Partial {
    Tensor sum;  // owned: a copy of the first gradient, added into in place
    int64_t count = 0;
    std::set<std::string, std::less<>> replicas;  // the named ones counted here
  };
  using Ready = std::vector<std::function<void()>>;

  // Serves waiting takers in order while the head can be served.
  void FlushLocked(Ready& ready) REQUIRES(mu_);
  // The accumulated sum as one tensor (merging buckets), and empties them.
  Tensor DrainLocked() REQUIRES(mu_);
  void FinishTakeLocked(const std::shared_ptr<TakeAttempt>& a, Status s, Tensor sum,
                        int64_t count, Ready& ready) REQUIRES(mu_);
  void CancelTake(const std::shared_ptr<TakeAttempt>& a, const Status& why);

  const std::string name_;
  const DType dtype_;
  const PartialShape shape_;

  mutable Mutex mu_;
  std::map<int64_t, Partial> partials_ GUARDED_BY(mu_);  // by local step
  int64_t count_ GUARDED_BY(mu_) = 0;                    // sum of the counts
  int64_t global_step_ GUARDED_BY(mu_) = 0;
  int64_t stale_dropped_ GUARDED_BY(mu_) = 0;
  int64_t duplicates_dropped_ GUARDED_BY(mu_) = 0;
  std::deque<std::shared_ptr<TakeAttempt>> takers_ GUARDED_BY(mu_);
};

}  // namespace tfd::kernels
