#include "bench/child_process.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <thread>

namespace tfd::bench {
namespace {

// In the child, between fork and exec or body: only system calls here.
void PrepareChild(int cpu, pid_t parent) {
  if (cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof(set), &set);
  }
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  // The parent may have died before prctl took effect.
  if (getppid() != parent) _exit(127);
}

int ExitCode(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

Status PinSelf(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof(set), &set) != 0) {
    return errors::Internal("cannot pin to CPU ", cpu, ": ", strerror(errno));
  }
  return OkStatus();
}

std::vector<int> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int i = 0; i < CPU_SETSIZE; ++i) {
    if (CPU_ISSET(i, &set)) cpus.push_back(i);
  }
  return cpus;
}

StatusOr<ChildProcess> ChildProcess::Exec(const std::vector<std::string>& argv, int cpu,
                                          const std::string& log_path) {
  std::vector<std::string> args = argv;
  std::vector<char*> c_argv;
  for (auto& a : args) c_argv.push_back(a.data());
  c_argv.push_back(nullptr);
  const int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0) return errors::Internal("cannot open ", log_path, ": ", strerror(errno));
  // The child reports a failed exec through this pipe; a successful exec
  // closes it (O_CLOEXEC) and the parent reads nothing.
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) {
    close(log);
    return errors::Internal("pipe: ", strerror(errno));
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    close(log);
    close(report[0]);
    close(report[1]);
    return errors::Internal("fork: ", strerror(errno));
  }
  if (pid == 0) {
    PrepareChild(cpu, parent);
    const int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, 1);
    dup2(log, 2);
    execv(c_argv[0], c_argv.data());
    const int err = errno;
    (void)!write(report[1], &err, sizeof(err));
    _exit(127);
  }
  close(log);
  close(report[1]);
  int err = 0;
  const ssize_t n = read(report[0], &err, sizeof(err));
  close(report[0]);
  ChildProcess child(pid);
  if (n == static_cast<ssize_t>(sizeof(err))) {
    child.Stop();
    return errors::NotFound("cannot run ", argv[0], ": ", strerror(err));
  }
  return child;
}

StatusOr<ChildProcess> ChildProcess::Fork(const std::function<int()>& body, int cpu) {
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) return errors::Internal("fork: ", strerror(errno));
  if (pid == 0) {
    PrepareChild(cpu, parent);
    _exit(body());
  }
  return ChildProcess(pid);
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept : pid_(other.pid_) { other.pid_ = -1; }

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    Stop();
    pid_ = other.pid_;
    other.pid_ = -1;
  }
  return *this;
}

ChildProcess::~ChildProcess() { Stop(); }

void ChildProcess::RequestStop() {
  if (pid_ > 0) kill(pid_, SIGTERM);
}

bool ChildProcess::Exited() {
  if (pid_ <= 0) return true;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    return true;
  }
  return false;
}

int ChildProcess::Stop(std::chrono::milliseconds grace) {
  if (pid_ <= 0) return 0;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    return ExitCode(status);
  }
  kill(pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < deadline) {
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return ExitCode(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return ExitCode(status);
}

}  // namespace tfd::bench
