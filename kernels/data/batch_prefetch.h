// Preparing an input batch while the current step computes, so that drawing,
// scaling and one-hot encoding the next batch stay off the step's critical
// path (IdxNextBatch took 52-67 µs of a 0.7 ms classic MNIST step; see
// bench/NOTES.md, "The fixed cost of a kernel call").
//
// A PreparedBatch holds one batch's tensors, made by a function of values
// (it may run twice): on a PrefetchThread, or on the taker's own thread when
// the taker comes before the thread has finished, so that a step never waits
// for a thread that runs only on idle CPU time.
//
//   auto prepared = std::make_shared<PreparedBatch>([=] { return MakeTensors(batch); });
//   thread.Post(prepared);
//   ...                                           // the step computes
//   TFD_ASSIGN_OR_RETURN(BatchTensors t, prepared->Take(ctx.deadline()));
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "common/mutex.h"
#include "common/status.h"
#include "common/tensor.h"

namespace tfd::kernels::data {

struct BatchTensors {
  Tensor images;
  Tensor labels;
};

class PreparedBatch {
 public:
  using Make = std::function<StatusOr<BatchTensors>()>;
  explicit PreparedBatch(Make make) : make_(std::move(make)) {}

  // Makes the tensors unless that has started already; the prefetch
  // thread's entry.
  void Run();
  // The tensors, once: those made ahead when ready, else made here, never
  // waiting for the prefetch thread (it runs at the lowest priority). A
  // RESOURCE_EXHAUSTED met ahead of time is tried once more here, since the
  // memory it lacked may be free now; one met here while the thread is
  // still making its copy waits for that copy until `deadline`.
  StatusOr<BatchTensors> Take(std::chrono::steady_clock::time_point deadline);

 private:
  enum class State { kQueued, kRunning, kDone };

  Mutex mu_;
  std::condition_variable done_;
  State state_ GUARDED_BY(mu_) = State::kQueued;
  std::optional<StatusOr<BatchTensors>> result_ GUARDED_BY(mu_);  // set with kDone
  const Make make_;
};

// One thread that runs posted batches (or other jobs) in order, started by
// the first Post. By default it runs at the lowest priority, on CPU time
// nobody else wants, which suits work a taker can redo itself
// (PreparedBatch); work a taker must wait for (a stream read ahead) needs
// `idle_priority` false.
class PrefetchThread {
 public:
  explicit PrefetchThread(bool idle_priority = true) : idle_priority_(idle_priority) {}
  // Stops the thread after the batch it is making; batches not yet started
  // are left to their takers.
  ~PrefetchThread();
  PrefetchThread(const PrefetchThread&) = delete;
  PrefetchThread& operator=(const PrefetchThread&) = delete;

  void Post(std::shared_ptr<PreparedBatch> batch);
  void Post(std::function<void()> job);

 private:
  void Loop();

  const bool idle_priority_;
  Mutex mu_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_ GUARDED_BY(mu_);
  bool stop_ GUARDED_BY(mu_) = false;
  std::thread thread_ GUARDED_BY(mu_);  // started by Post; joined by the destructor
};

}  // namespace tfd::kernels::data
