// StepDeadlines: one thread that fires the deadlines of running steps.
//
// Every step has a deadline and nearly every step ends long before it. A
// timer per step on the compute pool costs a wake-up of a pool thread when
// the step ends and its timer is cancelled (two context switches on every
// step, measured by bench/rpc_bench); here adding and removing a deadline is
// a short critical section, and the thread wakes only for a deadline sooner
// than the one it sleeps until, or when that one passes. Steps usually share
// one timeout, so back-to-back steps wake it about once per timeout.
//
//   auto id = StepDeadlines::Shared().Add(deadline, [] { cm.Cancel(...); });
//   ...
//   StepDeadlines::Shared().Remove(id);  // `fire` is not running and never will
//
// Thread-safety: all methods may be called from any thread, `fire` included
// (it runs on the deadlines thread, and a step it cancels may end there).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <thread>

#include "common/mutex.h"

namespace tfd {

class StepDeadlines {
 public:
  using Clock = std::chrono::steady_clock;
  using Id = uint64_t;

  StepDeadlines();
  ~StepDeadlines();  // joins the thread; deadlines still registered never fire
  StepDeadlines(const StepDeadlines&) = delete;
  StepDeadlines& operator=(const StepDeadlines&) = delete;

  // The process's instance, started on first use.
  static StepDeadlines& Shared();

  // Runs `fire` once at `when` unless removed first.
  Id Add(Clock::time_point when, std::function<void()> fire);
  // Forgets `id`; if its `fire` is running on another thread, waits for it
  // to return. A no-op for an id that has fired or was removed.
  void Remove(Id id);

  size_t size() const;

 private:
  void Loop();

  mutable Mutex mu_;
  std::condition_variable changed_;   // the earliest deadline moved, or stopping
  std::condition_variable fired_;     // a `fire` returned
  // Keyed by (deadline, id): the first entry is the next to fire.
  std::map<std::pair<Clock::time_point, Id>, std::function<void()>> queue_ GUARDED_BY(mu_);
  std::map<Id, Clock::time_point> when_ GUARDED_BY(mu_);  // the queue key of each id
  Id next_id_ GUARDED_BY(mu_) = 1;
  // When the thread wakes next; Add notifies only for a deadline before it.
  Clock::time_point sleeping_until_ GUARDED_BY(mu_) = Clock::time_point::max();
  Id firing_ GUARDED_BY(mu_) = 0;  // the id whose `fire` runs now, 0 when none
  bool stop_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace tfd
