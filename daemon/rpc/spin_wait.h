// Waiting on a kj event loop that polls for a while before it sleeps
// (tfd --spin-wait-us).
//
// A thread that sleeps in epoll between a peer's messages pays the kernel's
// wake-up for each of them, and a parameter-server step is a chain of short
// waits: the ps waits for the step's start and for the gradients, the worker
// for the parameters and for the ps's answer. With a budget, the thread keeps
// polling instead (epoll with a zero timeout, then sched_yield, so that any
// other thread ready on this CPU runs first) until `budget` has passed since
// it last had work, and only then sleeps until the next event, after which
// it polls again. An idle task costs nothing; a busy one up to `budget` of CPU
// per quiet spell. What it buys: docs/performance.md; what it costs and
// risks: bench/NOTES.md, "Polling before sleeping".
//
//   const siginfo_t info = WaitSpinning(stop, io, config.spin_wait);
//
// Thread-safety: the event loop's thread, as Promise::wait.
#pragma once

#include <kj/async-io.h>
#include <kj/async-unix.h>
#include <sched.h>

#include <chrono>

namespace tfd {

// Polls that take longer than this ran something: the budget starts again.
inline constexpr std::chrono::microseconds kSpinWorkThreshold{10};

template <typename T>
T WaitSpinning(kj::Promise<T>& p, kj::AsyncIoContext& io, std::chrono::microseconds budget) {
  using Clock = std::chrono::steady_clock;
  if (budget.count() <= 0) return p.wait(io.waitScope);
  for (;;) {
    auto until = Clock::now() + budget;
    for (;;) {
      const auto before = Clock::now();
      if (p.poll(io.waitScope)) return p.wait(io.waitScope);
      const auto after = Clock::now();
      if (after - before > kSpinWorkThreshold) until = after + budget;
      if (after >= until) break;
      sched_yield();
    }
    // Sleeps until an event. When another thread's wake-up ended the sleep,
    // it is raised again: the port's wait() has consumed it, and only the
    // loop's own poll, on seeing it, takes the events that thread queued.
    if (io.unixEventPort.wait()) io.unixEventPort.wake();
  }
}

}  // namespace tfd
