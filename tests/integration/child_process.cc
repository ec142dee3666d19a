#include "tests/integration/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace tfd::testing {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

int ExitStatus(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

}  // namespace

std::string TfctlBinary() {
  const char* p = std::getenv("TFCTL");
  return p ? p : "tfctl";
}

std::string OneLine(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  std::string out;
  for (char c : text) out += c == '\n' ? std::string(" | ") : std::string(1, c);
  return out;
}

StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Spawn(const std::vector<std::string>& argv) {
  if (argv.empty()) return errors::InvalidArgument("no program to run");
  char tmpl[] = "/tmp/tfd-child-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return errors::Internal("mkdtemp: ", strerror(errno));
  const std::string dir = tmpl;
  std::vector<std::string> args = argv;
  std::vector<char*> c_argv;
  for (auto& a : args) c_argv.push_back(a.data());
  c_argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, (dir + "/stdout").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, (dir + "/stderr").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, c_argv[0], &actions, nullptr, c_argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    return errors::Internal("cannot start ", argv[0], ": ", strerror(rc));
  }
  return std::make_unique<ChildProcess>(pid, dir);
}

ChildProcess::~ChildProcess() {
  Kill();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

StatusOr<int> ChildProcess::Wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (pid_ > 0) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      exit_status_ = ExitStatus(status);
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return errors::DeadlineExceeded("the child process ", pid_, " is still running after ",
                                      timeout.count(), " ms");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return exit_status_;
}

void ChildProcess::Kill() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  exit_status_ = ExitStatus(status);
  pid_ = -1;
}

std::string ChildProcess::Stdout() const { return ReadFile(dir_ + "/stdout"); }
std::string ChildProcess::Stderr() const { return ReadFile(dir_ + "/stderr"); }

StatusOr<ProcessResult> RunProcess(const std::vector<std::string>& argv,
                                   std::chrono::milliseconds timeout) {
  TFD_ASSIGN_OR_RETURN(auto child, ChildProcess::Spawn(argv));
  auto status = child->Wait(timeout);
  if (!status.ok()) {
    child->Kill();
    return errors::DeadlineExceeded(status.status().message(), "; stdout: ", child->Stdout(),
                                    "; stderr: ", child->Stderr());
  }
  return ProcessResult{*status, child->Stdout(), child->Stderr()};
}

}  // namespace tfd::testing
