// Queue: elements, waiting attempts, and how events complete them.
#include "kernels/data_flow/queue.h"

#include <optional>

namespace tfd::kernels {

// An attempt's token and end are the queue's to change, under its mu_: `mu`
// refers to it (HeldAs tells the analysis so where the queue holds it).
struct Queue::EnqueueAttempt {
  explicit EnqueueAttempt(Mutex& queue_mu) : mu(queue_mu) {}
  Mutex& mu;
  std::vector<Tuple> tuples;
  size_t next = 0;  // tuples[next..] are still to be added
  EnqueueDone done;
  CancellationManager* cm = nullptr;
  std::optional<CancellationManager::Token> token GUARDED_BY(mu);
  bool finished GUARDED_BY(mu) = false;
};

struct Queue::DequeueAttempt {
  explicit DequeueAttempt(Mutex& queue_mu) : mu(queue_mu) {}
  Mutex& mu;
  int64_t n = 0;
  Take take = Take::kExactly;
  std::vector<Tuple> taken;  // removed from the queue, not yet handed out
  DequeueDone done;
  CancellationManager* cm = nullptr;
  std::optional<CancellationManager::Token> token GUARDED_BY(mu);
  bool finished GUARDED_BY(mu) = false;
};

namespace {

std::string ShapesString(const std::vector<PartialShape>& shapes) {
  std::string out = "[";
  for (size_t i = 0; i < shapes.size(); ++i) out += (i ? ", " : "") + shapes[i].ToString();
  return out + "]";
}

std::string TypesString(const std::vector<DType>& types) {
  std::string out = "[";
  for (size_t i = 0; i < types.size(); ++i)
    out += (i ? ", " : "") + std::string(DTypeName(types[i]));
  return out + "]";
}

// The status a waiter finishes with when its step is cancelled: the
// cancellation's code (DEADLINE_EXCEEDED at the step deadline) and a message
// saying what it was waiting for.
Status WaitCancelled(const Status& why, const std::string& waiting_for) {
  const Code code = why.ok() ? Code::kCancelled : why.code();
  const std::string reason = why.message().empty() ? "cancelled" : why.message();
  return Status(code, reason + " while " + waiting_for);
}

}  // namespace

Queue::Queue(std::string name, std::vector<DType> component_types, std::vector<PartialShape> shapes,
             int64_t capacity, std::optional<Shuffle> shuffle)
    : name_(std::move(name)),
      component_types_(std::move(component_types)),
      shapes_(std::move(shapes)),
      capacity_(capacity < 0 ? -1 : capacity),
      shuffle_(shuffle),
      picks_(shuffle ? std::make_unique<random::GuardedPhilox>(shuffle->seed, shuffle->seed2)
                     : nullptr) {}

std::string Queue::CapacityString() const {
  return capacity_ < 0 ? "unbounded" : "capacity " + std::to_string(capacity_);
}

std::string Queue::DebugString() const {
  MutexLock lock(mu_);
  return errors::StrCat("queue '", name_, "': ", elements_.size(), " elements, ", CapacityString(),
                        closed_ ? ", closed" : ", open");
}

ResourceDescription Queue::Describe() const {
  return {
      .kind = "queue",
      .gauges = {
          {"size", "Elements waiting in each queue on this task.", static_cast<double>(size())},
          {"capacity", "Each queue's capacity (-1: unbounded).", static_cast<double>(capacity_)}}};
}

int64_t Queue::size() const {
  MutexLock lock(mu_);
  return static_cast<int64_t>(elements_.size());
}

bool Queue::closed() const {
  MutexLock lock(mu_);
  return closed_;
}

Status Queue::CheckSameSpec(const std::vector<DType>& component_types,
                            const std::vector<PartialShape>& shapes, int64_t capacity,
                            const std::optional<Shuffle>& shuffle) const {
  if (shuffle.has_value() != shuffle_.has_value()) {
    return errors::InvalidArgument(
        "queue '", name_, "' is a ", shuffle_ ? "RandomShuffleQueue" : "FIFOQueue",
        " but this node declares a ", shuffle ? "RandomShuffleQueue" : "FIFOQueue");
  }
  if (shuffle && shuffle->min_after_dequeue != shuffle_->min_after_dequeue) {
    return errors::InvalidArgument("queue '", name_, "' has min_after_dequeue ",
                                   shuffle_->min_after_dequeue, " but this node declares ",
                                   shuffle->min_after_dequeue);
  }
  if (component_types != component_types_) {
    return errors::InvalidArgument("queue '", name_, "' has component types ",
                                   TypesString(component_types_), " but this node declares ",
                                   TypesString(component_types));
  }
  if (shapes != shapes_) {
    return errors::InvalidArgument("queue '", name_, "' has component shapes ",
                                   ShapesString(shapes_), " but this node declares ",
                                   ShapesString(shapes));
  }
  if ((capacity < 0 ? -1 : capacity) != capacity_) {
    return errors::InvalidArgument("queue '", name_, "' has ", CapacityString(),
                                   " but this node declares capacity ", capacity);
  }
  return OkStatus();
}

Status Queue::ValidateTuple(const Tuple& tuple) const {
  if (tuple.size() != component_types_.size()) {
    return errors::InvalidArgument("queue '", name_, "' takes ", component_types_.size(),
                                   " components but got ", tuple.size());
  }
  for (size_t i = 0; i < tuple.size(); ++i) {
    if (tuple[i].dtype() != component_types_[i]) {
      return errors::InvalidArgument("component ", i, " of queue '", name_, "' must be ",
                                     DTypeName(component_types_[i]), " but is ",
                                     tuple[i].Describe());
    }
    if (!shapes_.empty() && !shapes_[i].IsCompatibleWith(tuple[i].shape())) {
      return errors::InvalidArgument("component ", i, " of queue '", name_, "' must have shape ",
                                     shapes_[i].ToString(), " but is ", tuple[i].Describe());
    }
  }
  return OkStatus();
}

void Queue::TryEnqueue(std::vector<Tuple> tuples, CancellationManager* cm, EnqueueDone done) {
  auto a = std::make_shared<EnqueueAttempt>(mu_);
  a->tuples = std::move(tuples);
  a->done = std::move(done);
  a->cm = cm;
  // Registered before the attempt is visible, so whoever finishes it knows
  // the token to deregister.
  std::optional<CancellationManager::Token> token;
  if (cm != nullptr) {
    token = cm->Register(
        [self = shared_from_this(), a](const Status& why) { self->CancelEnqueue(a, why); });
    if (!token) return CancelEnqueue(a, cm->reason());
  }
  Ready ready;
  {
    MutexLock lock(mu_);
    HeldAs same(Held(mu_), a->mu);
    if (a->finished) return;  // cancelled meanwhile; the callback has run
    a->token = token;
    if (closed_) {
      FinishEnqueueLocked(a, errors::Cancelled("queue '", name_, "' is closed"), ready);
    } else {
      enqueue_waiters_.push_back(a);
      FlushLocked(ready);
    }
  }
  for (auto& r : ready) r();
}

void Queue::TryDequeue(int64_t n, Take take, CancellationManager* cm, DequeueDone done) {
  auto a = std::make_shared<DequeueAttempt>(mu_);
  a->n = n;
  a->take = take;
  a->done = std::move(done);
  a->cm = cm;
  std::optional<CancellationManager::Token> token;
  if (cm != nullptr) {
    token = cm->Register(
        [self = shared_from_this(), a](const Status& why) { self->CancelDequeue(a, why); });
    if (!token) return CancelDequeue(a, cm->reason());
  }
  Ready ready;
  {
    MutexLock lock(mu_);
    HeldAs same(Held(mu_), a->mu);
    if (a->finished) return;
    a->token = token;
    dequeue_waiters_.push_back(a);
    FlushLocked(ready);
  }
  for (auto& r : ready) r();
}

void Queue::Close(bool cancel_pending_enqueues) {
  Ready ready;
  {
    MutexLock lock(mu_);
    closed_ = true;
    if (cancel_pending_enqueues) {
      while (!enqueue_waiters_.empty()) {
        auto a = enqueue_waiters_.front();
        enqueue_waiters_.pop_front();
        FinishEnqueueLocked(
            a,
            errors::Cancelled("enqueue to queue '", name_, "' was cancelled: the queue was closed"),
            ready);
      }
    }
    FlushLocked(ready);
  }
  for (auto& r : ready) r();
}

void Queue::FlushLocked(Ready& ready) {
  bool progress = true;
  while (progress) {
    // Enqueues first, so that after a close the dequeues see every element
    // still on its way before deciding they cannot be served.
    progress = FlushEnqueuesLocked(ready);
    progress = FlushDequeuesLocked(ready) || progress;
  }
}

bool Queue::FlushEnqueuesLocked(Ready& ready) {
  bool progress = false;
  while (!enqueue_waiters_.empty()) {
    const auto a = enqueue_waiters_.front();
    while (a->next < a->tuples.size() &&
           (capacity_ < 0 || static_cast<int64_t>(elements_.size()) < capacity_)) {
      elements_.push_back(std::move(a->tuples[a->next++]));
      progress = true;
    }
    if (a->next < a->tuples.size()) break;  // full: the head waits for room
    enqueue_waiters_.pop_front();
    FinishEnqueueLocked(a, OkStatus(), ready);
    progress = true;
  }
  return progress;
}

bool Queue::FlushDequeuesLocked(Ready& ready) {
  bool progress = false;
  while (!dequeue_waiters_.empty()) {
    const auto a = dequeue_waiters_.front();
    const size_t need = static_cast<size_t>(a->n) - a->taken.size();
    if (closed_ && FinishedByCloseLocked(a, need, ready)) {
      progress = true;
      continue;
    }
    // Take what is there, so a DequeueMany larger than the capacity makes
    // room for the enqueues it waits for.
    for (size_t i = 0, n = std::min(need, TakeableLocked()); i < n; ++i) {
      a->taken.push_back(TakeOneLocked());
      progress = true;
    }
    if (static_cast<int64_t>(a->taken.size()) < a->n) break;
    dequeue_waiters_.pop_front();
    FinishDequeueLocked(a, OkStatus(), ready);
    progress = true;
  }
  return progress;
}

bool Queue::FinishedByCloseLocked(const std::shared_ptr<DequeueAttempt>& a, size_t need,
                                  Ready& ready) {
  size_t coming = 0;
  for (const auto& e : enqueue_waiters_) coming += e->tuples.size() - e->next;
  if (elements_.size() + coming >= need) return false;     // it will be served
  if (a->take == Take::kUpTo && coming > 0) return false;  // it takes those too
  const size_t left = elements_.size() + a->taken.size();
  dequeue_waiters_.pop_front();
  if (a->take == Take::kUpTo && left > 0) {
    while (!elements_.empty()) a->taken.push_back(TakeOneLocked());
    FinishDequeueLocked(a, OkStatus(), ready);
    return true;
  }
  PutBackLocked(a->taken);
  FinishDequeueLocked(
      a,
      errors::OutOfRange("queue '", name_, "' is closed and has insufficient elements (requested ",
                         a->n, ", current size ", left, ")"),
      ready);
  return true;
}

size_t Queue::TakeableLocked() const {
  if (!shuffle_ || closed_) return elements_.size();
  const auto keep = static_cast<size_t>(shuffle_->min_after_dequeue);
  return elements_.size() > keep ? elements_.size() - keep : 0;
}

Queue::Tuple Queue::TakeOneLocked() {
  if (shuffle_) {
    // Any element, swapped to the back so taking it is O(1).
    const size_t pick = picks_->Reserve(2).Next64() % elements_.size();
    std::swap(elements_[pick], elements_.back());
    Tuple t = std::move(elements_.back());
    elements_.pop_back();
    return t;
  }
  Tuple t = std::move(elements_.front());
  elements_.pop_front();
  return t;
}

void Queue::PutBackLocked(std::vector<Tuple>& taken) {
  // In order at the front of a FIFO queue, as if never taken.
  for (size_t i = taken.size(); i-- > 0;) elements_.push_front(std::move(taken[i]));
  taken.clear();
}

void Queue::FinishEnqueueLocked(const std::shared_ptr<EnqueueAttempt>& a, Status s, Ready& ready) {
  HeldAs same(Held(mu_), a->mu);
  a->finished = true;
  ready.push_back([a, s = std::move(s), token = a->token] {
    // False when cancellation is running the callback concurrently; it finds
    // the attempt finished and does nothing.
    if (token) a->cm->Deregister(*token);
    EnqueueDone done = std::move(a->done);
    done(s);
  });
}

void Queue::FinishDequeueLocked(const std::shared_ptr<DequeueAttempt>& a, Status s, Ready& ready) {
  HeldAs same(Held(mu_), a->mu);
  a->finished = true;
  ready.push_back([a, s = std::move(s), token = a->token, got = std::move(a->taken)]() mutable {
    if (token) a->cm->Deregister(*token);
    DequeueDone done = std::move(a->done);
    done(s, std::move(got));
  });
}

void Queue::CancelEnqueue(const std::shared_ptr<EnqueueAttempt>& a, const Status& why) {
  Ready ready;
  {
    MutexLock lock(mu_);
    HeldAs same(Held(mu_), a->mu);
    if (a->finished) return;
    for (auto it = enqueue_waiters_.begin(); it != enqueue_waiters_.end(); ++it) {
      if (*it == a) {
        enqueue_waiters_.erase(it);
        break;
      }
    }
    const bool full = capacity_ >= 0 && static_cast<int64_t>(elements_.size()) >= capacity_;
    const std::string state = full ? "full" : errors::StrCat(elements_.size(), " elements");
    a->token.reset();  // the cancellation manager already dropped it
    FinishEnqueueLocked(a,
                        WaitCancelled(why, errors::StrCat("enqueuing to queue '", name_, "' (",
                                                          state, ", ", CapacityString(), ")")),
                        ready);
    // The next enqueue in line may fit where this one did not.
    FlushLocked(ready);
  }
  for (auto& r : ready) r();
}

void Queue::CancelDequeue(const std::shared_ptr<DequeueAttempt>& a, const Status& why) {
  Ready ready;
  {
    MutexLock lock(mu_);
    HeldAs same(Held(mu_), a->mu);
    if (a->finished) return;
    for (auto it = dequeue_waiters_.begin(); it != dequeue_waiters_.end(); ++it) {
      if (*it == a) {
        dequeue_waiters_.erase(it);
        break;
      }
    }
    const size_t available = elements_.size() + a->taken.size();
    const std::string state =
        available == 0 ? "empty" : errors::StrCat(available, " elements, ", a->n, " requested");
    PutBackLocked(a->taken);
    a->token.reset();
    FinishDequeueLocked(a,
                        WaitCancelled(why, errors::StrCat("dequeuing from queue '", name_, "' (",
                                                          state, ", ", CapacityString(), ")")),
                        ready);
    // Returned elements may serve the dequeues that were behind this one.
    FlushLocked(ready);
  }
  for (auto& r : ready) r();
}

}  // namespace tfd::kernels
