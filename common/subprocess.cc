#include "common/subprocess.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "common/io_error.h"

extern char** environ;

namespace tfd {
namespace {

// Everything the child does between fork and exec, decided before the fork:
// after it the child may only make async-signal-safe system calls (another
// thread of the parent may have held the allocator's lock at the fork).
struct ChildPlan {
  int stdin_fd = -1;  // each >= 3 and close-on-exec, or -1 to inherit
  int stdout_fd = -1;
  int stderr_fd = -1;
  bool new_session = false;
  bool pin = false;
  cpu_set_t cpus;
  bool die_with_parent = false;
  pid_t parent = -1;
  int max_open_files = 0;
  int report_fd = -1;  // write end of the close-on-exec pipe the parent reads
};

// What the child could not do, sent to the parent in place of an exec.
struct ChildFailure {
  int stage;
  int err;
};
enum Stage : int { kSetsid, kPin, kLimit, kRedirect, kExec };
constexpr const char* kStageNames[] = {"starting a session", "pinning it to its CPUs",
                                       "limiting its open files", "redirecting its output",
                                       "executing it"};
static_assert(sizeof(kStageNames) / sizeof(kStageNames[0]) == kExec + 1);

[[noreturn]] void Fail(const ChildPlan& plan, Stage stage) {
  const ChildFailure failure{stage, errno};
  (void)!::write(plan.report_fd, &failure, sizeof(failure));
  ::_exit(127);
}

// In the child, after fork. Returns only on success.
void SetUpChild(const ChildPlan& plan) {
  // A mask inherited from the parent (an event loop blocks the signals it
  // waits for) would leave the child deaf to SIGTERM.
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  if (plan.new_session && ::setsid() < 0) Fail(plan, kSetsid);
  if (plan.die_with_parent) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    // The parent may have ended before prctl took effect.
    if (::getppid() != plan.parent) ::_exit(127);
  }
  if (plan.pin && ::sched_setaffinity(0, sizeof(plan.cpus), &plan.cpus) != 0) Fail(plan, kPin);
  if (plan.max_open_files > 0) {
    const rlimit limit{static_cast<rlim_t>(plan.max_open_files),
                       static_cast<rlim_t>(plan.max_open_files)};
    if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) Fail(plan, kLimit);
  }
  // dup2 clears close-on-exec on the copy; the originals are >= 3 and close
  // at exec.
  const int fds[] = {plan.stdin_fd, plan.stdout_fd, plan.stderr_fd};
  for (int target = 0; target < 3; ++target) {
    if (fds[target] >= 0 && ::dup2(fds[target], target) < 0) Fail(plan, kRedirect);
  }
}

// `path` opened close-on-exec on a descriptor >= 3, so that dup2 onto 0, 1
// or 2 in the child never meets itself.
StatusOr<int> OpenStream(const std::string& path, int flags, const char* what) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
  if (fd < 0) return IoError(errno, errors::StrCat("opening '", path, "' for the child's ", what));
  if (fd >= 3) return fd;
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  const int err = errno;
  ::close(fd);
  if (moved < 0) return IoError(err, errors::StrCat("opening '", path, "'"));
  return moved;
}

// The descriptors a ChildPlan holds, closed in the parent on every path.
class PlanFds {
 public:
  explicit PlanFds(ChildPlan& plan) : plan_(plan) {}
  ~PlanFds() {
    if (plan_.stdin_fd >= 0) ::close(plan_.stdin_fd);
    if (plan_.stdout_fd >= 0) ::close(plan_.stdout_fd);
    if (plan_.stderr_fd >= 0 && plan_.stderr_fd != plan_.stdout_fd) ::close(plan_.stderr_fd);
  }
  PlanFds(const PlanFds&) = delete;
  PlanFds& operator=(const PlanFds&) = delete;

 private:
  ChildPlan& plan_;
};

// The CPU set of o.cpu and o.cpus, built before the fork.
Status PlanPinning(const SubprocessOptions& o, ChildPlan& plan) {
  CPU_ZERO(&plan.cpus);
  std::vector<int> cpus = o.cpus;
  if (o.cpu >= 0) cpus.push_back(o.cpu);
  for (const int cpu : cpus) {
    if (cpu < 0 || cpu >= CPU_SETSIZE) {
      return errors::InvalidArgument("cannot pin a child to CPU ", cpu, ": CPUs are numbered 0 to ",
                                     CPU_SETSIZE - 1);
    }
    CPU_SET(cpu, &plan.cpus);
  }
  plan.pin = !cpus.empty();
  return OkStatus();
}

Status OpenStreams(const SubprocessOptions& o, ChildPlan& plan) {
  const int out_flags = O_WRONLY | O_CREAT | (o.truncate_output ? O_TRUNC : O_APPEND);
  if (!o.stdin_path.empty()) {
    TFD_ASSIGN_OR_RETURN(plan.stdin_fd, OpenStream(o.stdin_path, O_RDONLY, "input"));
  }
  if (!o.stdout_path.empty()) {
    TFD_ASSIGN_OR_RETURN(plan.stdout_fd, OpenStream(o.stdout_path, out_flags, "output"));
  }
  if (!o.stderr_path.empty()) {
    if (o.stderr_path == o.stdout_path) {
      plan.stderr_fd = plan.stdout_fd;
    } else {
      TFD_ASSIGN_OR_RETURN(plan.stderr_fd, OpenStream(o.stderr_path, out_flags, "errors"));
    }
  }
  return OkStatus();
}

// argv[0] as execve wants it: a path. Searched in the parent, because the
// libc's own search may allocate, which the child must not.
StatusOr<std::string> FindProgram(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* env = std::getenv("PATH");
  const std::string path = env != nullptr ? env : "/usr/local/bin:/usr/bin:/bin";
  size_t begin = 0;
  for (;;) {
    const size_t end = std::min(path.find(':', begin), path.size());
    const std::string dir = end > begin ? path.substr(begin, end - begin) : ".";
    const std::string candidate = dir + "/" + name;
    struct stat st;
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    if (end == path.size()) break;
    begin = end + 1;
  }
  return errors::NotFound("cannot run '", name, "': no such program in PATH");
}

int ExitStatus(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Forks; the child sets itself up and runs `in_child`, which must not return.
// In the parent: waits for the child to exec (or to report why it could
// not) and returns its pid.
template <typename F>
StatusOr<pid_t> ForkChild(const SubprocessOptions& o, const std::string& what, F in_child) {
  ChildPlan plan;
  PlanFds close_fds(plan);
  TFD_RETURN_IF_ERROR(PlanPinning(o, plan));
  TFD_RETURN_IF_ERROR(OpenStreams(o, plan));
  plan.new_session = o.new_session;
  plan.die_with_parent = o.die_with_parent;
  plan.parent = ::getpid();
  plan.max_open_files = o.max_open_files;
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return IoError(errno, "starting " + what + ": pipe");
  plan.report_fd = report[1];
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(report[0]);
    ::close(report[1]);
    return IoError(err, "starting " + what + ": fork");
  }
  if (pid == 0) {
    ::close(report[0]);
    SetUpChild(plan);
    in_child(plan);
    ::_exit(127);
  }
  ::close(report[1]);
  ChildFailure failure{};
  ssize_t n;
  do {
    n = ::read(report[0], &failure, sizeof(failure));
  } while (n < 0 && errno == EINTR);
  ::close(report[0]);
  if (n != static_cast<ssize_t>(sizeof(failure))) return pid;  // the pipe closed at exec
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const Stage stage = static_cast<Stage>(std::clamp(failure.stage, 0, static_cast<int>(kExec)));
  if (stage == kExec && failure.err == ENOENT) {
    return errors::NotFound("cannot run '", what, "': no such program");
  }
  return IoError(failure.err, errors::StrCat("cannot run '", what, "': ", kStageNames[stage]));
}

}  // namespace

StatusOr<Subprocess> Subprocess::Start(const std::vector<std::string>& argv,
                                       const SubprocessOptions& options) {
  if (argv.empty() || argv[0].empty()) return errors::InvalidArgument("no program to run");
  TFD_ASSIGN_OR_RETURN(const std::string program, FindProgram(argv[0]));
  // Built before the fork: the child only reads them.
  std::vector<std::string> args = argv;
  std::vector<char*> c_argv;
  for (std::string& a : args) c_argv.push_back(a.data());
  c_argv.push_back(nullptr);
  char** const env = environ;
  TFD_ASSIGN_OR_RETURN(const pid_t pid,
                       ForkChild(options, argv[0], [&](const ChildPlan& plan) {
                         ::execve(program.c_str(), c_argv.data(), env);
                         Fail(plan, kExec);
                       }));
  return Subprocess(pid, options.stop_grace);
}

StatusOr<Subprocess> Subprocess::Fork(const std::function<int()>& body,
                                      const SubprocessOptions& options) {
  TFD_ASSIGN_OR_RETURN(const pid_t pid,
                       ForkChild(options, "a forked copy", [&](const ChildPlan& plan) {
                         ::close(plan.report_fd);  // set up: let the parent go on
                         ::_exit(body());
                       }));
  return Subprocess(pid, options.stop_grace);
}

Subprocess::Subprocess(Subprocess&& other) noexcept
    : pid_(other.pid_), stop_grace_(other.stop_grace_), exit_status_(other.exit_status_) {
  other.pid_ = -1;
}

Subprocess& Subprocess::operator=(Subprocess&& other) noexcept {
  if (this != &other) {
    if (running()) Stop(stop_grace_);
    pid_ = other.pid_;
    stop_grace_ = other.stop_grace_;
    exit_status_ = other.exit_status_;
    other.pid_ = -1;
  }
  return *this;
}

Subprocess::~Subprocess() {
  if (running()) Stop(stop_grace_);
}

void Subprocess::Reaped(int status) {
  pid_ = -1;
  exit_status_ = ExitStatus(status);
}

bool Subprocess::Exited() {
  if (pid_ <= 0) return true;
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    Reaped(status);
    return true;
  }
  if (r < 0 && errno == ECHILD) {  // reaped elsewhere (SIGCHLD ignored): gone
    pid_ = -1;
    return true;
  }
  return false;
}

StatusOr<int> Subprocess::Wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  // Short sleeps first, so that quick children cost little.
  auto pause = std::chrono::milliseconds(1);
  while (!Exited()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      return errors::DeadlineExceeded("process ", pid_, " is still running after ",
                                      timeout.count(), " ms");
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(10));
  }
  if (!exit_status_) return errors::Internal("the exit status of the process was lost");
  return *exit_status_;
}

void Subprocess::Signal(int signal) {
  if (pid_ > 0) ::kill(pid_, signal);
}

int Subprocess::Stop(std::chrono::milliseconds grace) {
  if (!Exited()) {
    Signal(SIGTERM);
    if (!Wait(grace).ok()) return Kill();
  }
  return exit_status_.value_or(-1);
}

int Subprocess::Kill() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    pid_t r;
    while ((r = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
    }
    if (r == pid_) {
      Reaped(status);
    } else {
      pid_ = -1;
    }
  }
  return exit_status_.value_or(-1);
}

pid_t Subprocess::Release() {
  const pid_t pid = pid_;
  pid_ = -1;
  return pid;
}

Status PinSelf(int cpu) {
  if (cpu < 0 || cpu >= CPU_SETSIZE) return errors::InvalidArgument("no CPU ", cpu);
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (::sched_setaffinity(0, sizeof(set), &set) != 0) {
    return IoError(errno, errors::StrCat("pinning to CPU ", cpu));
  }
  return OkStatus();
}

}  // namespace tfd
