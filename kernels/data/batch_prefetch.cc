// PreparedBatch and PrefetchThread: one batch made once, ahead of time or
// on demand.
#include "kernels/data/batch_prefetch.h"

#include <pthread.h>
#include <sched.h>

#include <utility>

namespace tfd::kernels::data {

void PreparedBatch::Run() {
  {
    MutexLock lock(mu_);
    if (state_ != State::kQueued) return;
    state_ = State::kRunning;
  }
  StatusOr<BatchTensors> made = make_();
  MutexLock lock(mu_);
  result_ = std::move(made);
  state_ = State::kDone;
  done_.notify_all();
}

StatusOr<BatchTensors> PreparedBatch::Take(std::chrono::steady_clock::time_point deadline) {
  MutexLock lock(mu_);
  if (state_ == State::kDone) {
    StatusOr<BatchTensors> result = std::move(*result_);
    result_.reset();
    lock.Unlock();
    if (!result.ok() && result.status().code() == Code::kResourceExhausted) return make_();
    return result;
  }
  // Not made yet. The thread runs only on CPU time nobody else wants, so
  // waiting for it could take as long as the machine stays busy: this
  // thread makes the batch itself, and a copy the thread is making is
  // dropped when it finishes (the thread never holds a step up).
  const bool thread_running = state_ == State::kRunning;
  if (!thread_running) state_ = State::kDone;  // the thread finds nothing to do
  lock.Unlock();
  StatusOr<BatchTensors> made = make_();
  if (made.ok() || !thread_running || made.status().code() != Code::kResourceExhausted) {
    return made;
  }
  // The thread's copy holds the memory this one lacked: take it instead.
  lock.Lock();
  if (!lock.WaitUntil(done_, deadline, [&]() REQUIRES(mu_) { return state_ == State::kDone; })) {
    return made;
  }
  StatusOr<BatchTensors> result = std::move(*result_);
  result_.reset();
  return result;
}

PrefetchThread::~PrefetchThread() {
  {
    MutexLock lock(mu_);
    stop_ = true;
    queue_.clear();
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void PrefetchThread::Post(std::shared_ptr<PreparedBatch> batch) {
  Post([batch = std::move(batch)] { batch->Run(); });
}

void PrefetchThread::Post(std::function<void()> job) {
  {
    MutexLock lock(mu_);
    queue_.push_back(std::move(job));
    if (!thread_.joinable()) {
      thread_ = std::thread([this] { Loop(); });
      pthread_setname_np(thread_.native_handle(), "tfd-prefetch");
    }
  }
  wake_.notify_one();
}

void PrefetchThread::Loop() {
  // Only CPU time nobody else wants: a step that needs its batch before the
  // thread got to it makes the batch itself (PreparedBatch::Take), so the
  // prefetch must never take a CPU from the step's own kernels.
  if (idle_priority_) {
    sched_param idle{};
    (void)pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle);
  }
  MutexLock lock(mu_);
  while (true) {
    lock.Wait(wake_, [&]() REQUIRES(mu_) { return stop_ || !queue_.empty(); });
    if (stop_) return;
    std::function<void()> job = std::move(queue_.front());
    queue_.pop_front();
    lock.Unlock();
    job();
    job = nullptr;
    lock.Lock();
  }
}

}  // namespace tfd::kernels::data
