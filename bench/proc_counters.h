// What a process spent, from /proc: CPU time, time waiting for a CPU, minor
// page faults and context switches (all threads). Snapshots before and after
// a measurement say where the time of a slow figure went: into faulting
// fresh pages, into copies (CPU time), into waking threads up (switches), or
// into waiting while other programs had the CPU (run-queue time).
//
//   ProcCounters before = ReadProcCounters(pid);
//   ...                                       // the measured runs
//   ProcCounters per_run = (ReadProcCounters(pid) - before) / runs;
//
// Thread-safety: pure reads of /proc.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace tfd::bench {

// The first line of `path` that starts with `prefix`; with a prefix, what
// follows its ": " ("model name" in /proc/cpuinfo). "?" when there is none.
// For the machine's facts at the top of each bench's report.
std::string ProcLine(const std::string& path, const std::string& prefix = "");

struct ProcCounters {
  double cpu_seconds = 0;       // on a CPU (schedstat, ns resolution), summed over threads
  double runqueue_seconds = 0;  // runnable but waiting for a CPU, summed over threads
  double system_seconds = 0;    // in the kernel (stat, 10 ms ticks)
  double minor_faults = 0;
  double context_switches = 0;  // voluntary + involuntary, summed over threads

  ProcCounters operator-(const ProcCounters& o) const;
  ProcCounters operator/(double n) const;
};

// Zeros when the process is gone or /proc is unreadable.
ProcCounters ReadProcCounters(pid_t pid);

// The process's peak resident set so far (VmHWM), in bytes; 0 when
// unreadable.
size_t PeakRssBytes(pid_t pid);
// Its resident set now (VmRSS), in bytes; 0 when unreadable.
size_t RssBytes(pid_t pid);

// Called with true just before the timed runs of a measurement and with
// false just after them, so warm-ups and set-up stay outside.
using TimedSection = std::function<void(bool begin)>;

// The counters of a few processes over a timed section, divided by the
// number of runs in it.
//
//   CounterWatch watch({getpid(), peer_pid});
//   std::vector<ProcCounters> per_run;        // one per pid, after the section
//   Measure(..., watch.Section(runs, &per_run));
class CounterWatch {
 public:
  explicit CounterWatch(std::vector<pid_t> pids);
  // The watch must outlive the returned function.
  TimedSection Section(int runs, std::vector<ProcCounters>* per_run);

 private:
  std::vector<pid_t> pids_;
  std::vector<ProcCounters> before_;
};

}  // namespace tfd::bench
