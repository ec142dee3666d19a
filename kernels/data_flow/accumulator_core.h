// AccumulatorCore: what the dense and the sparse gradient accumulators of
// synchronous replicas share — the global step, stale and duplicate
// gradients, buckets by local step, and takes that wait without a thread.
// Only how a gradient is summed differs, and that is the `Sum` policy:
//
//   struct Sum {                       // e.g. DenseSum, SparseSum
//     using Gradient = ...;            // what an apply brings
//     static StatusOr<Sum> Start(const Gradient& g);   // a sum of g alone (owned)
//     void Add(const Gradient& g);     // += g; g was checked to fit
//     void Merge(Sum&& other);         // += another bucket's sum
//   };
//
// A gradient computed at a local step older than the global step is stale
// and dropped (a worker that fell behind must not pull the model back); a
// fresh one is added, once per replica: a replica's second gradient before
// the next take (its task restarted and pushed its step again, or a chief
// that restarted woke it in the sync round to push again) is dropped too,
// so a take always sums distinct replicas. A take waits until enough gradients
// are in, hands out their sum and count, empties the accumulator and
// advances the global step — all under one lock, so a gradient computed
// against the old step that arrives after the take is stale.
//
// Waiting never parks a thread: a take that finds too few gradients leaves
// an attempt behind and returns; the apply that brings the count up (or the
// step's cancellation) completes it and runs its callback on the thread that
// caused the event, outside the lock. Takers are served in arrival order.
//
// The derived accumulator checks a gradient against its declared dtype and
// shape before Accumulate, names itself in Kind/DebugString, and turns the
// sum into an average in its take's callback.
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
#include <vector>

#include "common/cancellation.h"
#include "common/mutex.h"
#include "common/resource_mgr.h"
#include "common/status.h"
#include "kernels/framework/resource.h"

namespace tfd::kernels {

// What happened to one applied gradient.
enum class AccumulatorApplyResult { kAccumulated, kStale, kDuplicate };

// The counters DebugString shows, read at once.
struct AccumulatorCounts {
  int64_t accumulated = 0;
  int64_t global_step = 0;
  int64_t stale_dropped = 0;
  int64_t duplicates_dropped = 0;
};

// The cancellation's code (DEADLINE_EXCEEDED at the step deadline) and a
// message saying what the take waited for, as FIFOQueue's waiters say it.
Status AccumulatorWaitCancelled(const Status& why, const std::string& waiting_for);

// What the ops that take either kind of accumulator (AccumulatorNumAccumulated,
// AccumulatorSetGlobalStep) see of it. On the resource interface, so /metrics
// counts and describes each kind; never checkpointed (the chief sets the
// global step after a restore, and a round in flight is redone).
class GradientAccumulator : public Resource {
 public:
  virtual const std::string& name() const = 0;
  virtual int64_t num_accumulated() const = 0;
  // Sets the global step (a chief restoring a checkpoint); gradients already
  // accumulated at a lower local step are discarded, and their replicas may
  // contribute again. Returns how many were.
  virtual int64_t SetGlobalStep(int64_t new_global_step) = 0;
};

template <typename Sum>
class AccumulatorCore : public GradientAccumulator,
                        public std::enable_shared_from_this<AccumulatorCore<Sum>> {
 public:
  using Gradient = typename Sum::Gradient;
  using ApplyResult = AccumulatorApplyResult;
  // `sum` is empty (std::nullopt) unless the status is OK.
  using SumDone = std::function<void(const Status&, std::optional<Sum> sum, int64_t count)>;
  // Whether `g` fits the sum already held (of `count` gradients); the
  // message names the accumulator.
  using FitsHeld = std::function<Status(const Sum& held, int64_t count, const Gradient& g)>;

  explicit AccumulatorCore(std::string name) : name_(std::move(name)) {}

  const std::string& name() const override { return name_; }
  int64_t num_accumulated() const override { return Counts().accumulated; }
  int64_t global_step() const { return Counts().global_step; }
  int64_t num_stale_dropped() const { return Counts().stale_dropped; }
  int64_t num_duplicates_dropped() const { return Counts().duplicates_dropped; }

  // Kind() and its counters, as /metrics shows them
  // (tfd_<kind>_gradients{<kind>="name"}, tfd_<kind>_global_step).
  ResourceDescription Describe() const override {
    const AccumulatorCounts c = Counts();
    return {.kind = std::string(Kind()),
            .gauges = {{"gradients", "Gradients accumulated since the last take.",
                        static_cast<double>(c.accumulated)},
                       {"global_step", "The global step gradients must be computed at or after.",
                        static_cast<double>(c.global_step)}}};
  }

  AccumulatorCounts Counts() const {
    MutexLock lock(mu_);
    return {count_, global_step_, stale_dropped_, duplicates_dropped_};
  }

  int64_t SetGlobalStep(int64_t new_global_step) override {
    MutexLock lock(mu_);
    global_step_ = new_global_step;
    int64_t discarded = 0;
    // Buckets are ordered by local step: the stale ones are a prefix.
    while (!partials_.empty() && partials_.begin()->first < new_global_step) {
      discarded += partials_.begin()->second.count;
      partials_.erase(partials_.begin());
    }
    count_ -= discarded;
    // Fewer gradients cannot complete a take: no flush.
    return discarded;
  }

 protected:
  // Adds `g` (already checked against the declared dtype and shape) when
  // local_step >= the global step and `replica` has no gradient in yet; an
  // empty replica (a session in one process) is never a duplicate. `fits`
  // checks it against what is held, also for a gradient then dropped, since
  // a wrong shape is a bug whatever the step.
  StatusOr<ApplyResult> Accumulate(int64_t local_step, const Gradient& g, std::string_view replica,
                                   const FitsHeld& fits) {
    Ready ready;
    {
      MutexLock lock(mu_);
      if (count_ > 0) TFD_RETURN_IF_ERROR(fits(partials_.begin()->second.sum, count_, g));
      if (local_step < global_step_) {
        ++stale_dropped_;
        return ApplyResult::kStale;
      }
      if (!replica.empty()) {
        for (const auto& [step, partial] : partials_) {
          if (partial.replicas.contains(replica)) {
            ++duplicates_dropped_;
            return ApplyResult::kDuplicate;
          }
        }
      }
      auto it = partials_.find(local_step);
      if (it == partials_.end()) {
        // The input's buffers may be shared with other consumers: the sum is
        // our own copy. TODO(perf): the copy and adds run under mu_; large
        // gradients from many replicas serialise here.
        TFD_ASSIGN_OR_RETURN(Sum sum, Sum::Start(g));
        it = partials_.emplace(local_step, Partial{std::move(sum), 0, {}}).first;
      } else {
        it->second.sum.Add(g);
      }
      ++it->second.count;
      if (!replica.empty()) it->second.replicas.emplace(replica);
      ++count_;
      FlushLocked(ready);
    }
    for (auto& r : ready) r();
    return ApplyResult::kAccumulated;
  }

  // Once at least `num_required` (>= 1) gradients are in: `done` gets their
  // sum and count, the accumulator is emptied and the global step advances
  // by one. With the cancellation's code (saying what it waited for, have
  // and need) if `cm` cancels first.
  void TakeSum(int64_t num_required, CancellationManager* cm, SumDone done) {
    auto a = std::make_shared<TakeAttempt>(mu_);
    a->num_required = num_required;
    a->done = std::move(done);
    a->cm = cm;
    // Registered before the attempt is visible, so whoever finishes it knows
    // the token to deregister.
    std::optional<CancellationManager::Token> token;
    if (cm != nullptr) {
      token = cm->Register([self = this->shared_from_this(), a](const Status& why) {
        self->CancelTake(a, why);
      });
      if (!token) return CancelTake(a, cm->reason());
    }
    Ready ready;
    {
      MutexLock lock(mu_);
      HeldAs same(Held(mu_), a->mu);
      if (a->finished) return;  // cancelled meanwhile; the callback has run
      a->token = token;
      takers_.push_back(a);
      FlushLocked(ready);
    }
    for (auto& r : ready) r();
  }

 private:
  // A take's token and end are the accumulator's to change, under its mu_:
  // `mu` refers to it (HeldAs tells the analysis so where it is held).
  struct TakeAttempt {
    explicit TakeAttempt(Mutex& accumulator_mu) : mu(accumulator_mu) {}
    Mutex& mu;
    int64_t num_required = 0;
    SumDone done;
    CancellationManager* cm = nullptr;
    std::optional<CancellationManager::Token> token GUARDED_BY(mu);
    bool finished GUARDED_BY(mu) = false;
  };
  // Gradients applied at one local step: kept apart so SetGlobalStep can drop
  // exactly the ones it makes stale. In steady state there is one bucket.
  struct Partial {
    Sum sum;
    int64_t count = 0;
    std::set<std::string, std::less<>> replicas;  // the named ones counted here
  };
  using Ready = std::vector<std::function<void()>>;

  // Serves waiting takers in order while the head can be served. A take
  // empties the accumulator, so the next taker (num_required >= 1) always
  // waits for new gradients: at most one is served per event.
  void FlushLocked(Ready& ready) REQUIRES(mu_) {
    while (!takers_.empty() && count_ >= takers_.front()->num_required) {
      const auto a = takers_.front();
      takers_.pop_front();
      const int64_t count = count_;
      auto first = partials_.begin();
      Sum sum = std::move(first->second.sum);
      for (auto it = std::next(first); it != partials_.end(); ++it) {
        sum.Merge(std::move(it->second.sum));
      }
      partials_.clear();
      count_ = 0;
      ++global_step_;
      FinishTakeLocked(a, OkStatus(), std::move(sum), count, ready);
    }
  }

  void FinishTakeLocked(const std::shared_ptr<TakeAttempt>& a, Status s, std::optional<Sum> sum,
                        int64_t count, Ready& ready) REQUIRES(mu_) {
    HeldAs same(Held(mu_), a->mu);
    a->finished = true;
    ready.push_back(
        [a, s = std::move(s), token = a->token, sum = std::move(sum), count]() mutable {
          // False when cancellation is running the callback concurrently; it
          // finds the attempt finished and does nothing.
          if (token) a->cm->Deregister(*token);
          SumDone done = std::move(a->done);
          done(s, std::move(sum), count);
        });
  }

  void CancelTake(const std::shared_ptr<TakeAttempt>& a, const Status& why) {
    Ready ready;
    {
      MutexLock lock(mu_);
      HeldAs same(Held(mu_), a->mu);
      if (a->finished) return;
      for (auto it = takers_.begin(); it != takers_.end(); ++it) {
        if (*it == a) {
          takers_.erase(it);
          break;
        }
      }
      a->token.reset();  // the cancellation manager already dropped it
      FinishTakeLocked(
          a,
          AccumulatorWaitCancelled(
              why, errors::StrCat("taking the average gradient from accumulator '", name_,
                                  "' (have ", count_, " of ", a->num_required,
                                  " required, global step ", global_step_, ")")),
          std::nullopt, 0, ready);
      // The taker behind this one may need fewer gradients.
      FlushLocked(ready);
    }
    for (auto& r : ready) r();
  }

  const std::string name_;

  mutable Mutex mu_;
  std::map<int64_t, Partial> partials_ GUARDED_BY(mu_);  // by local step
  int64_t count_ GUARDED_BY(mu_) = 0;                    // sum of the counts
  int64_t global_step_ GUARDED_BY(mu_) = 0;
  int64_t stale_dropped_ GUARDED_BY(mu_) = 0;
  int64_t duplicates_dropped_ GUARDED_BY(mu_) = 0;
  std::deque<std::shared_ptr<TakeAttempt>> takers_ GUARDED_BY(mu_);
};

}  // namespace tfd::kernels
