// ChildProcess: a process the benchmark starts, pinned to one CPU, and
// always stops: SIGTERM, then SIGKILL after a bound, then waitpid — from the
// destructor too, so an error path leaves nothing running. The child also
// asks the kernel for SIGTERM when the benchmark dies (PR_SET_PDEATHSIG), so
// even a crashed or killed benchmark leaves no daemons behind.
//
//   auto tfd = ChildProcess::Exec({"/path/tfd", "--job", "ps", ...}, /*cpu=*/1, "/tmp/x.log");
//   auto echo = ChildProcess::Fork([fd] { return RunEchoPeer(fd); }, /*cpu=*/1);
//   ...                                   // ~ChildProcess stops and reaps it
//
// Thread-safety: one thread (the benchmark's main thread, which must also be
// the thread that started the child, for PR_SET_PDEATHSIG).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"

namespace tfd::bench {

class ChildProcess {
 public:
  // Runs argv[0] with stdout to /dev/null and stderr appended to `log_path`.
  // A negative `cpu` (here and in Fork) leaves the child on every CPU this
  // process may use.
  static StatusOr<ChildProcess> Exec(const std::vector<std::string>& argv, int cpu,
                                     const std::string& log_path);
  // Runs `body` in a forked copy of this process and exits with its result.
  // Only for code that needs nothing but plain sockets: call it before this
  // process starts any thread.
  static StatusOr<ChildProcess> Fork(const std::function<int()>& body, int cpu);

  ChildProcess() = default;
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }
  // True if the child has already exited (and reaps it).
  bool Exited();
  // SIGTERM without waiting, so several children can stop together.
  void RequestStop();
  // SIGTERM, wait up to `grace`, then SIGKILL. Returns the exit status
  // (128 + signal for a signal). Does nothing when not running.
  int Stop(std::chrono::milliseconds grace = std::chrono::seconds(10));

 private:
  explicit ChildProcess(pid_t pid) : pid_(pid) {}
  pid_t pid_ = -1;
};

// Pins the calling thread (and so what it later starts) to `cpu`.
Status PinSelf(int cpu);
// The CPUs this process may run on, in order.
std::vector<int> AllowedCpus();

}  // namespace tfd::bench
