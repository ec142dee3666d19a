// Times two ways of doing the same work in alternating rounds, so that
// whatever else the machine does at the time weighs on both alike: the
// ratio of each round is what kernel_bench reports, with its spread.
//
//   AlternatingTimer timer(/*rounds=*/7);
//   TFD_ASSIGN_OR_RETURN(Paired p, timer.Time(tfd_call, hand_call, /*calls=*/500));
//   double r = Median(p.Ratios());    // hand time / tfd time, per round
//
// Thread-safety: runs everything on the calling thread.
#pragma once

#include <chrono>
#include <functional>
#include <vector>

#include "bench/stats.h"
#include "common/status.h"

namespace tfd::bench {

// Seconds per call of each side, one entry per round.
struct Paired {
  std::vector<double> a, b;
  // b / a per round: with a = tfd and b = the hand-written code, the share
  // of Eigen's pace that tfd reaches (1 = as fast).
  std::vector<double> Ratios() const {
    std::vector<double> r;
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) r.push_back(a[i] > 0 ? b[i] / a[i] : 0);
    return r;
  }
};

class AlternatingTimer {
 public:
  explicit AlternatingTimer(int rounds) : rounds_(rounds) {}

  // `calls` calls of each side per round; the side that goes first
  // alternates. Stops at the first error either side returns.
  StatusOr<Paired> Time(const std::function<Status()>& a, const std::function<Status()>& b,
                        long calls) const {
    Paired p;
    for (int r = 0; r < rounds_; ++r) TFD_RETURN_IF_ERROR(Round(a, b, calls, r, &p));
    return p;
  }

  // Round number `r` alone, appended to `p`: for callers that do something
  // else between rounds. Even rounds run `a` first, odd ones `b`.
  static Status Round(const std::function<Status()>& a, const std::function<Status()>& b,
                      long calls, int r, Paired* p) {
    double ta = 0, tb = 0;
    if (r % 2 == 0) {
      TFD_ASSIGN_OR_RETURN(ta, PerCall(a, calls));
      TFD_ASSIGN_OR_RETURN(tb, PerCall(b, calls));
    } else {
      TFD_ASSIGN_OR_RETURN(tb, PerCall(b, calls));
      TFD_ASSIGN_OR_RETURN(ta, PerCall(a, calls));
    }
    p->a.push_back(ta);
    p->b.push_back(tb);
    return OkStatus();
  }

  // How many calls of `f` take about `seconds` (at least 3).
  static StatusOr<long> CallsFor(const std::function<Status()>& f, double seconds) {
    long n = 0;
    const auto start = Clock::now();
    while (Elapsed(start) < seconds / 10 || n < 3) {
      TFD_RETURN_IF_ERROR(f());
      ++n;
    }
    return std::max(3L, static_cast<long>(n * seconds / Elapsed(start)));
  }

 private:
  using Clock = std::chrono::steady_clock;
  static double Elapsed(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
  }
  static StatusOr<double> PerCall(const std::function<Status()>& f, long calls) {
    const auto start = Clock::now();
    for (long i = 0; i < calls; ++i) TFD_RETURN_IF_ERROR(f());
    return Elapsed(start) / static_cast<double>(calls);
  }

  int rounds_;
};

}  // namespace tfd::bench
