// Subprocess: a child process started from an argv (or a forked copy of this
// process running a function), with its standard streams sent to files, and
// always accounted for: the object that started a child waits for it, stops
// it or explicitly lets it go. tfctl start, the benchmarks and the
// integration tests all start their processes through it.
//
//   SubprocessOptions o;
//   o.stdout_path = o.stderr_path = "run/ps-0.log";
//   TFD_ASSIGN_OR_RETURN(Subprocess p, Subprocess::Start({"tfd", "--job", "ps"}, o));
//   StatusOr<int> status = p.Wait(std::chrono::seconds(5));  // DEADLINE_EXCEEDED: still running
//   p.Stop(std::chrono::seconds(10));                        // SIGTERM, then SIGKILL
//
// Exit statuses are as a shell reports them: the exit code, or 128 + N for a
// child ended by signal N.
//
// Thread-safety: a Subprocess belongs to one thread at a time; different
// objects may be used from different threads. Start and Fork may be called
// from a process with threads running: between fork and exec the child makes
// only async-signal-safe system calls (a forked body is the exception: see
// Fork).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/allowed_cpus.h"
#include "common/status.h"

namespace tfd {

struct SubprocessOptions {
  // The child's standard streams: "" inherits this process's; otherwise the
  // file at that path ("/dev/null" to discard). Output files are created
  // with mode 0644 (less the umask) and appended to, or truncated first when
  // `truncate_output`. The same path for stdout and stderr shares one open
  // file, as `>log 2>&1` does.
  std::string stdin_path;
  std::string stdout_path;
  std::string stderr_path;
  bool truncate_output = false;

  // setsid(): the child leads a session of its own, with no controlling
  // terminal, so a daemon started from a shell outlives the shell's hangup
  // and is not in its process group.
  bool new_session = false;

  // Pins the child to this CPU before it runs anything; -1 leaves it on
  // every CPU this process may use.
  int cpu = -1;
  // Pins the child to these CPUs (with `cpu`, if set) before it runs
  // anything; empty leaves it as `cpu` says. INVALID_ARGUMENT for a number
  // outside [0, CPU_SETSIZE).
  std::vector<int> cpus;

  // The child gets SIGTERM when the thread that started it ends
  // (PR_SET_PDEATHSIG), so a crashed or killed parent leaves nothing
  // running. Start such children from a thread that lives as long as they
  // should: the kernel watches the thread, not the process.
  bool die_with_parent = false;

  // RLIMIT_NOFILE (soft and hard) for the child; 0 inherits this process's.
  int max_open_files = 0;

  // How ~Subprocess ends a child that is still running: SIGTERM and up to
  // this long to exit, then SIGKILL. Zero sends SIGKILL at once.
  std::chrono::milliseconds stop_grace{0};
};

class Subprocess {
 public:
  // Runs argv[0] (a path, or a name looked up in PATH) with this process's
  // environment. NOT_FOUND when there is no such program; the error of
  // opening a redirection or of exec itself otherwise (naming the path).
  static StatusOr<Subprocess> Start(const std::vector<std::string>& argv,
                                    const SubprocessOptions& options = {});
  // Runs `body` in a forked copy of this process, which exits with its
  // result. The copy has only the thread that called Fork, so `body` must
  // not need locks or threads of this process: call it before starting any
  // thread (the benchmarks' raw socket peers do).
  static StatusOr<Subprocess> Fork(const std::function<int()>& body,
                                   const SubprocessOptions& options = {});

  Subprocess() = default;
  Subprocess(Subprocess&& other) noexcept;
  Subprocess& operator=(Subprocess&& other) noexcept;
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;
  // Ends a child still running (options.stop_grace) and reaps it, unless
  // Release() let it go.
  ~Subprocess();

  // -1 once reaped or released.
  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0; }
  // The exit status once the child has been reaped.
  std::optional<int> exit_status() const { return exit_status_; }

  // True when the child has exited (and reaps it); does not wait.
  bool Exited();
  // The exit status once the child has exited; DEADLINE_EXCEEDED, and
  // still running, when it has not within `timeout`.
  StatusOr<int> Wait(std::chrono::milliseconds timeout);
  // Sends `signal` without waiting (SIGTERM to several children, so that
  // they stop together).
  void Signal(int signal);
  // SIGTERM, up to `grace` to exit, then SIGKILL; reaps it and returns the
  // exit status. The status it had when already reaped.
  int Stop(std::chrono::milliseconds grace);
  // SIGKILL, as a crash or `kill -9` would; reaps it and returns the exit
  // status.
  int Kill();
  // Lets the child go: it is no longer waited for, stopped or reaped here
  // (tfctl start's daemons outlive tfctl). Returns its pid.
  pid_t Release();

 private:
  Subprocess(pid_t pid, std::chrono::milliseconds stop_grace)
      : pid_(pid), stop_grace_(stop_grace) {}
  // Records the exit of a waitpid status.
  void Reaped(int status);

  pid_t pid_ = -1;
  std::chrono::milliseconds stop_grace_{0};
  std::optional<int> exit_status_;
};

// Pins the calling thread (and so what it later starts) to `cpu`.
Status PinSelf(int cpu);

}  // namespace tfd
