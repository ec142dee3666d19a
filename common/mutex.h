// Mutex and MutexLock: std::mutex and a scoped lock over it, annotated so
// that clang's -Wthread-safety (common/thread_annotations.h) knows when the
// mutex is held. They cost nothing over the standard types they wrap.
//
//   Mutex mu_;
//   std::deque<Item> items_ GUARDED_BY(mu_);
//   std::condition_variable changed_;
//
//   MutexLock lock(mu_);
//   items_.push_back(item);
//   lock.WaitFor(changed_, kWait, [&]() REQUIRES(mu_) { return items_.empty(); });
//
// A predicate passed to a wait reads guarded state, and clang checks a
// lambda's body as a function of its own: annotate it REQUIRES(mu_) as above
// (it runs with the mutex held).
//
// State that one object's mutex guards but that lives in another object
// (a queue's waiting attempts) is GUARDED_BY a reference to that mutex, and
// code that holds the mutex under its own name says so with HeldAs.
//
// Thread-safety: Mutex is a mutex; a MutexLock or HeldAs belongs to the
// thread that made it.
#pragma once

#include <cassert>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <utility>

#include "common/thread_annotations.h"

namespace tfd {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  // The standard's Lockable names, so std::unique_lock<Mutex> works where
  // locks are taken in a run-time order (the analysis does not follow
  // std::unique_lock; such a function says NO_THREAD_SAFETY_ANALYSIS).
  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  bool try_lock() TRY_ACQUIRE(true) { return mu_.try_lock(); }

 private:
  friend class MutexLock;
  std::mutex mu_;
};

// Holds a Mutex from construction to destruction, like std::unique_lock:
// Unlock and Lock let go of it for a while, and the waits release it while
// they wait on a std::condition_variable and hold it again on return.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : lock_(mu.mu_) {}
  ~MutexLock() RELEASE() {}
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void Unlock() RELEASE() { lock_.unlock(); }
  void Lock() ACQUIRE() { lock_.lock(); }

  // Waits for a notification on `cv` (or a spurious wake-up).
  void Wait(std::condition_variable& cv) { cv.wait(lock_); }
  // Waits until `done()` holds.
  template <typename Pred>
  void Wait(std::condition_variable& cv, Pred done) {
    cv.wait(lock_, std::move(done));
  }
  // Waits for a notification until `deadline`: std::cv_status::timeout when it passed.
  template <typename Clock, typename Duration>
  std::cv_status WaitUntil(std::condition_variable& cv,
                           const std::chrono::time_point<Clock, Duration>& deadline) {
    return cv.wait_until(lock_, deadline);
  }
  // Waits until `done()` holds or `deadline` passes; returns `done()`.
  template <typename Clock, typename Duration, typename Pred>
  bool WaitUntil(std::condition_variable& cv,
                 const std::chrono::time_point<Clock, Duration>& deadline, Pred done) {
    return cv.wait_until(lock_, deadline, std::move(done));
  }
  // Waits until `done()` holds or `timeout` has passed; returns `done()`.
  template <typename Rep, typename Period, typename Pred>
  bool WaitFor(std::condition_variable& cv, const std::chrono::duration<Rep, Period>& timeout,
               Pred done) {
    return cv.wait_for(lock_, timeout, std::move(done));
  }

 private:
  std::unique_lock<std::mutex> lock_;
};

// HeldAs's proof that this thread holds a mutex: Held(mu) makes one, and
// the analysis checks there that `mu` is held.
class HeldMutex;
inline HeldMutex Held(const Mutex& mu) REQUIRES(mu);
class HeldMutex {
 private:
  explicit HeldMutex(const Mutex& mu) : mu_(mu) {}
  friend HeldMutex Held(const Mutex& mu);
  friend class HeldAs;
  const Mutex& mu_;
};
inline HeldMutex Held(const Mutex& mu) { return HeldMutex(mu); }

// Tells the analysis that `alias` is a mutex this thread holds under another
// name, for as long as this object lives; it locks nothing. The analysis
// tells mutexes apart by the expression that names them, so state
// GUARDED_BY(a->mu), where a->mu refers to the queue's mu_, cannot be
// reached with mu_ held until this says they are one. Debug builds check
// that they are.
//
//   MutexLock lock(mu_);
//   HeldAs same(Held(mu_), a->mu);
//   if (a->finished) return;
//
// (The constructor cannot say REQUIRES(held) itself: on a scoped type's
// constructor clang reads that as taking the lock over, and would release
// it with this object.)
class SCOPED_CAPABILITY HeldAs {
 public:
  HeldAs(HeldMutex held, const Mutex& alias) ACQUIRE(alias) {
    assert(&held.mu_ == &alias);
    (void)held;
    (void)alias;
  }
  ~HeldAs() RELEASE() {}
  HeldAs(const HeldAs&) = delete;
  HeldAs& operator=(const HeldAs&) = delete;
};

}  // namespace tfd
