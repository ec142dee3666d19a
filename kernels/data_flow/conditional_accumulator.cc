// ConditionalAccumulator: the sum, the step, and how applies complete takes.
#include "kernels/data_flow/conditional_accumulator.h"

#include "common/tensor_eigen.h"

namespace tfd::kernels {

// A take's token and end are the accumulator's to change, under its mu_:
// `mu` refers to it (HeldAs tells the analysis so where the accumulator
// holds it).
struct ConditionalAccumulator::TakeAttempt {
  explicit TakeAttempt(Mutex& accumulator_mu) : mu(accumulator_mu) {}
  Mutex& mu;
  int64_t num_required = 0;
  TakeDone done;
  CancellationManager* cm = nullptr;
  std::optional<CancellationManager::Token> token GUARDED_BY(mu);
  bool finished GUARDED_BY(mu) = false;
};

namespace {

// sum += g, element-wise; both of the accumulator's dtype and shape.
void AddInto(const Tensor& sum, const Tensor& g) {
  TFD_SWITCH_FLOAT(sum.dtype(), T, { EigenFlat<T>(sum) += EigenFlat<T>(g); }, {});
}

void DivideBy(const Tensor& t, int64_t count) {
  TFD_SWITCH_FLOAT(t.dtype(), T, { EigenFlat<T>(t) /= static_cast<T>(count); }, {});
}

// As FIFOQueue's waiters: the cancellation's code (DEADLINE_EXCEEDED at the
// step deadline) and a message saying what the take waited for.
Status WaitCancelled(const Status& why, const std::string& waiting_for) {
  const Code code = why.ok() ? Code::kCancelled : why.code();
  const std::string reason = why.message().empty() ? "cancelled" : why.message();
  return Status(code, reason + " while " + waiting_for);
}

}  // namespace

ConditionalAccumulator::ConditionalAccumulator(std::string name, DType dtype, PartialShape shape)
    : name_(std::move(name)), dtype_(dtype), shape_(std::move(shape)) {}

std::string ConditionalAccumulator::DebugString() const {
  MutexLock lock(mu_);
  return errors::StrCat("accumulator '", name_, "': ", DTypeName(dtype_), shape_.ToString(), ", ",
                        count_, " gradients, global step ", global_step_, ", ", stale_dropped_,
                        " stale dropped, ", duplicates_dropped_, " duplicates dropped");
}

int64_t ConditionalAccumulator::num_accumulated() const {
  MutexLock lock(mu_);
  return count_;
}

int64_t ConditionalAccumulator::global_step() const {
  MutexLock lock(mu_);
  return global_step_;
}

int64_t ConditionalAccumulator::num_stale_dropped() const {
  MutexLock lock(mu_);
  return stale_dropped_;
}

int64_t ConditionalAccumulator::num_duplicates_dropped() const {
  MutexLock lock(mu_);
  return duplicates_dropped_;
}

Status ConditionalAccumulator::CheckSameSpec(DType dtype, const PartialShape& shape) const {
  if (dtype != dtype_ || !(shape == shape_)) {
    return errors::InvalidArgument("accumulator '", name_, "' holds ", DTypeName(dtype_),
                                   shape_.ToString(), " gradients but this node declares ",
                                   DTypeName(dtype), shape.ToString());
  }
  return OkStatus();
}

StatusOr<ConditionalAccumulator::ApplyResult> ConditionalAccumulator::Apply(
    int64_t local_step, const Tensor& gradient, std::string_view replica) {
  if (gradient.dtype() != dtype_) {
    return errors::InvalidArgument("accumulator '", name_, "' takes ", DTypeName(dtype_),
                                   " gradients but got ", gradient.Describe());
  }
  if (!shape_.IsCompatibleWith(gradient.shape())) {
    return errors::InvalidArgument("accumulator '", name_, "' takes gradients of shape ",
                                   shape_.ToString(), " but got shape ",
                                   gradient.shape().ToString());
  }
  Ready ready;
  {
    MutexLock lock(mu_);
    if (count_ > 0) {
      const TensorShape& held = partials_.begin()->second.sum.shape();
      if (!(held == gradient.shape())) {
        return errors::InvalidArgument("accumulator '", name_, "' holds ", count_,
                                       " gradients of shape ", held.ToString(),
                                       " but got shape ", gradient.shape().ToString());
      }
    }
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
      // The input's buffer may be shared with other consumers: sum into a
      // copy of our own. TODO(perf): the copy and adds run under mu_; large
      // gradients from many replicas serialise here.
      TFD_ASSIGN_OR_RETURN(Tensor sum, gradient.DeepCopy());
      it = partials_.emplace(local_step, Partial{std::move(sum), 1, {}}).first;
    } else {
      AddInto(it->second.sum, gradient);
      ++it->second.count;
    }
    if (!replica.empty()) it->second.replicas.emplace(replica);
    ++count_;
    FlushLocked(ready);
  }
  for (auto& r : ready) r();
  return ApplyResult::kAccumulated;
}

void ConditionalAccumulator::TakeAverage(int64_t num_required, CancellationManager* cm,
                                         TakeDone done) {
  auto a = std::make_shared<TakeAttempt>(mu_);
  a->num_required = num_required;
  a->done = std::move(done);
  a->cm = cm;
  // Registered before the attempt is visible, so whoever finishes it knows
  // the token to deregister.
  std::optional<CancellationManager::Token> token;
  if (cm != nullptr) {
    token = cm->Register(
        [self = shared_from_this(), a](const Status& why) { self->CancelTake(a, why); });
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

int64_t ConditionalAccumulator::SetGlobalStep(int64_t new_global_step) {
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

void ConditionalAccumulator::FlushLocked(Ready& ready) {
  // A take empties the accumulator, so the next taker (num_required >= 1)
  // always waits for new gradients: at most one is served per event.
  while (!takers_.empty() && count_ >= takers_.front()->num_required) {
    const auto a = takers_.front();
    takers_.pop_front();
    const int64_t count = count_;
    Tensor sum = DrainLocked();
    ++global_step_;
    FinishTakeLocked(a, OkStatus(), std::move(sum), count, ready);
  }
}

Tensor ConditionalAccumulator::DrainLocked() {
  auto first = partials_.begin();
  Tensor sum = std::move(first->second.sum);
  for (auto it = std::next(first); it != partials_.end(); ++it) AddInto(sum, it->second.sum);
  partials_.clear();
  count_ = 0;
  return sum;
}

void ConditionalAccumulator::FinishTakeLocked(const std::shared_ptr<TakeAttempt>& a, Status s,
                                              Tensor sum, int64_t count, Ready& ready) {
  HeldAs same(Held(mu_), a->mu);
  a->finished = true;
  ready.push_back([a, s = std::move(s), token = a->token, sum = std::move(sum), count]() mutable {
    // False when cancellation is running the callback concurrently; it finds
    // the attempt finished and does nothing.
    if (token) a->cm->Deregister(*token);
    // The sum is ours alone (never handed out before), so it becomes the
    // average in place, outside the lock.
    if (s.ok()) DivideBy(sum, count);
    TakeDone done = std::move(a->done);
    done(s, std::move(sum));
  });
}

void ConditionalAccumulator::CancelTake(const std::shared_ptr<TakeAttempt>& a, const Status& why) {
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
    FinishTakeLocked(a,
                     WaitCancelled(why, errors::StrCat("taking the average gradient from "
                                                       "accumulator '",
                                                       name_, "' (have ", count_, " of ",
                                                       a->num_required, " required, global step ",
                                                       global_step_, ")")),
                     Tensor(), 0, ready);
    // The taker behind this one may need fewer gradients.
    FlushLocked(ready);
  }
  for (auto& r : ready) r();
}

}  // namespace tfd::kernels
