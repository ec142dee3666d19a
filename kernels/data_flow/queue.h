// Queue: a bounded queue of tuples of tensors, held in a task's ResourceMgr
// so that every graph (and, through the RPC layer, every task) naming it
// shares it — the classic way to feed input across workers. The FIFOQueue op
// makes one that hands elements out in order, RandomShuffleQueue one that
// hands out a random element among those held (and, while open, keeps at
// least min_after_dequeue of them, so what comes out is well mixed).
//
// Waiting never parks a thread. An enqueue that finds the queue full and a
// dequeue that finds too few elements leave an attempt behind and return; the
// event that ends the wait (a dequeue making room, an enqueue bringing
// elements, Close, or the step's cancellation) completes the attempt and runs
// its callback, on the thread that caused the event, outside the queue's lock.
//
//   auto q = std::make_shared<Queue>("q", {DType::kFloat32}, {}, /*capacity=*/10);
//   q->TryEnqueue({{t}}, &cm, [](const Status& s) { ... });
//   q->TryDequeue(1, Queue::Take::kExactly, &cm,
//                 [](const Status& s, std::vector<Queue::Tuple> got) { ... });
//   q->Close(/*cancel_pending_enqueues=*/false);
//
// Semantics follow TensorFlow's FIFOQueue and RandomShuffleQueue: attempts are
// served in arrival order; EnqueueMany and DequeueMany move elements one at a
// time, so they may exceed the capacity; after Close, new enqueues fail with
// CANCELLED, pending ones still complete (or fail with CANCELLED if
// cancel_pending_enqueues), min_after_dequeue no longer holds elements back,
// and a dequeue that can no longer be satisfied fails with OUT_OF_RANGE (one
// "up to" n takes what is left instead, when anything is).
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/cancellation.h"
#include "common/mutex.h"
#include "common/resource_mgr.h"
#include "common/tensor.h"
#include "kernels/framework/resource.h"
#include "kernels/random/random_source.h"

namespace tfd::kernels {

class Queue : public Resource, public std::enable_shared_from_this<Queue> {
 public:
  using Tuple = std::vector<Tensor>;  // one tensor per component
  using EnqueueDone = std::function<void(const Status&)>;
  using DequeueDone = std::function<void(const Status&, std::vector<Tuple>)>;
  // A RandomShuffleQueue's: how many elements an open queue keeps, and its
  // stream's seeds (both 0: a different order every time).
  struct Shuffle {
    int64_t min_after_dequeue = 0;
    int64_t seed = 0, seed2 = 0;
  };
  // What a dequeue of n waits for: n elements, or (once the queue is closed
  // and nothing more can come) whatever is left, if anything.
  enum class Take { kExactly, kUpTo };

  // `shapes` is empty (components of any shape) or one shape per
  // component, which each element's must fit: fully defined, or (a
  // PaddingFIFOQueue's) of known rank with unknown dimensions, along which
  // elements vary. A negative capacity means unbounded. Without `shuffle`,
  // first in first out.
  Queue(std::string name, std::vector<DType> component_types, std::vector<PartialShape> shapes,
        int64_t capacity, std::optional<Shuffle> shuffle = std::nullopt);

  std::string_view Kind() const override { return "queue"; }
  // "queue 'q': 3 elements, capacity 10, open".
  std::string DebugString() const override;
  // kernels::Resource: described as "queue" with its size and capacity as
  // gauges (tfd_queue_size, tfd_queue_capacity); not checkpointed.
  ResourceDescription Describe() const override;

  const std::string& name() const { return name_; }
  const std::vector<DType>& component_types() const { return component_types_; }
  const std::vector<PartialShape>& shapes() const { return shapes_; }
  int64_t capacity() const { return capacity_; }
  int64_t size() const;
  bool closed() const;

  // INVALID_ARGUMENT unless this queue was made with exactly these settings
  // (another graph declaring the same shared queue differently, or as the
  // other kind); the seeds are not compared, as TensorFlow does not.
  Status CheckSameSpec(const std::vector<DType>& component_types,
                       const std::vector<PartialShape>& shapes, int64_t capacity,
                       const std::optional<Shuffle>& shuffle) const;
  // INVALID_ARGUMENT naming the component whose dtype or shape does not fit.
  Status ValidateTuple(const Tuple& tuple) const;

  // Adds `tuples` in order (already validated); `done` runs once all are in,
  // or with CANCELLED if the queue is or gets closed with pending enqueues
  // cancelled, or with the cancellation's code if `cm` cancels first (the
  // elements already added stay).
  void TryEnqueue(std::vector<Tuple> tuples, CancellationManager* cm, EnqueueDone done);
  // Removes `n` tuples (as `take` says); `done` gets them, or OUT_OF_RANGE
  // once the queue is closed and cannot supply them, or the cancellation's
  // code if `cm` cancels first (elements taken so far go back: to the front
  // of a FIFO one).
  void TryDequeue(int64_t n, Take take, CancellationManager* cm, DequeueDone done);
  void Close(bool cancel_pending_enqueues);

 private:
  struct EnqueueAttempt;
  struct DequeueAttempt;
  // Work to run once the lock is released: completed attempts' callbacks.
  using Ready = std::vector<std::function<void()>>;

  // Serves waiting attempts in order for as long as any makes progress.
  void FlushLocked(Ready& ready) REQUIRES(mu_);
  bool FlushEnqueuesLocked(Ready& ready) REQUIRES(mu_);
  bool FlushDequeuesLocked(Ready& ready) REQUIRES(mu_);
  // For a closed queue: ends the dequeue `a` (still `need` short) that can
  // no longer be served in full. One up to n takes what is left once
  // nothing more is on its way; otherwise OUT_OF_RANGE, what it took put
  // back. Whether it ended (and left dequeue_waiters_).
  bool FinishedByCloseLocked(const std::shared_ptr<DequeueAttempt>& a, size_t need, Ready& ready)
      REQUIRES(mu_);
  void FinishEnqueueLocked(const std::shared_ptr<EnqueueAttempt>& a, Status s, Ready& ready)
      REQUIRES(mu_);
  void FinishDequeueLocked(const std::shared_ptr<DequeueAttempt>& a, Status s, Ready& ready)
      REQUIRES(mu_);
  void CancelEnqueue(const std::shared_ptr<EnqueueAttempt>& a, const Status& why);
  void CancelDequeue(const std::shared_ptr<DequeueAttempt>& a, const Status& why);
  std::string CapacityString() const;
  // How many elements a dequeue may take now: a shuffling queue that is
  // open keeps min_after_dequeue.
  size_t TakeableLocked() const REQUIRES(mu_);
  // Removes the next element to hand out: the oldest, or a random one.
  Tuple TakeOneLocked() REQUIRES(mu_);
  // Puts back what a dequeue that failed had taken.
  void PutBackLocked(std::vector<Tuple>& taken) REQUIRES(mu_);

  const std::string name_;
  const std::vector<DType> component_types_;
  const std::vector<PartialShape> shapes_;
  const int64_t capacity_;
  const std::optional<Shuffle> shuffle_;

  mutable Mutex mu_;
  std::deque<Tuple> elements_ GUARDED_BY(mu_);
  std::deque<std::shared_ptr<EnqueueAttempt>> enqueue_waiters_ GUARDED_BY(mu_);
  std::deque<std::shared_ptr<DequeueAttempt>> dequeue_waiters_ GUARDED_BY(mu_);
  bool closed_ GUARDED_BY(mu_) = false;
  const std::unique_ptr<random::GuardedPhilox> picks_;  // a shuffling queue's draws
};

}  // namespace tfd::kernels
