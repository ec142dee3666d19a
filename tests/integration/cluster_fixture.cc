#include "tests/integration/cluster_fixture.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
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

// A port the kernel considers free right now on 127.0.0.1.
int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

bool WaitExit(pid_t pid, std::chrono::milliseconds timeout, int* status) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (waitpid(pid, status, WNOHANG) == pid) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

}  // namespace

std::string TfdBinary() {
  const char* p = std::getenv("TFD");
  return p ? p : "tfd";
}

LocalCluster::LocalCluster(const std::vector<std::pair<std::string, int>>& jobs,
                           std::vector<std::string> extra_flags)
    : io_(kj::setupAsyncIo()), extra_flags_(std::move(extra_flags)) {
  for (const auto& [job, n] : jobs) {
    std::vector<std::string> addresses;
    for (int i = 0; i < n; ++i) addresses.push_back("127.0.0.1:" + std::to_string(FreePort()));
    spec_.AddJob(job, addresses);
  }
  char tmpl[] = "/tmp/tfd-cluster-XXXXXX";
  dir_ = mkdtemp(tmpl);
}

LocalCluster::~LocalCluster() {
  for (auto& [key, p] : processes_) {
    if (p.pid > 0) kill(p.pid, SIGTERM);
  }
  for (auto& [key, p] : processes_) {
    int status = 0;
    if (p.pid > 0 && !WaitExit(p.pid, std::chrono::seconds(10), &status)) {
      kill(p.pid, SIGKILL);
      waitpid(p.pid, &status, 0);
    }
  }
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string LocalCluster::Address(const std::string& job, int task) const {
  return *spec_.TaskAddress(job, task);
}

Status LocalCluster::Start(const std::string& job, int task, std::vector<std::string> flags) {
  TFD_RETURN_IF_ERROR(Spawn(job, task, std::move(flags)));
  auto client = Connect(job, task, std::chrono::seconds(20));
  if (!client.ok()) return client.status().WithContext("log:\n" + Log(job, task));
  return OkStatus();
}

Status LocalCluster::Spawn(const std::string& job, int task, std::vector<std::string> flags) {
  Process& p = processes_[{job, task}];
  if (p.pid > 0) return errors::AlreadyExists(job, ":", task, " is running");
  p.log_path = dir_ + "/" + job + "-" + std::to_string(task) + ".log";
  std::vector<std::string> args = {TfdBinary(), "--cluster", spec_.ToJson(), "--job", job,
                                   "--task", std::to_string(task)};
  args.insert(args.end(), extra_flags_.begin(), extra_flags_.end());
  args.insert(args.end(), flags.begin(), flags.end());
  if (open_files_ > 0) {
    // posix_spawn cannot set a limit in the child; a shell can, and then
    // becomes tfd (same pid), so the limit holds from tfd's first instruction.
    args.insert(args.begin(), {"/bin/sh", "-c",
                               "ulimit -n " + std::to_string(open_files_) + " && exec \"$0\" \"$@\""});
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, p.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  const int rc = posix_spawnp(&p.pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    p.pid = -1;
    return errors::Internal("cannot start ", argv[0], ": ", strerror(rc));
  }
  return OkStatus();
}

Status LocalCluster::StartAll() {
  for (const auto& [job, tasks] : spec_.jobs()) {
    for (int i = 0; i < static_cast<int>(tasks.size()); ++i) TFD_RETURN_IF_ERROR(Start(job, i));
  }
  return OkStatus();
}

void LocalCluster::Kill(const std::string& job, int task) {
  Process& p = processes_[{job, task}];
  if (p.pid <= 0) return;
  kill(p.pid, SIGKILL);
  int status = 0;
  waitpid(p.pid, &status, 0);
  p.pid = -1;
}

StatusOr<int> LocalCluster::Stop(const std::string& job, int task, std::chrono::milliseconds timeout) {
  Process& p = processes_[{job, task}];
  if (p.pid <= 0) return errors::NotFound(job, ":", task, " is not running");
  kill(p.pid, SIGTERM);
  int status = 0;
  if (!WaitExit(p.pid, timeout, &status)) {
    kill(p.pid, SIGKILL);
    waitpid(p.pid, &status, 0);
    p.pid = -1;
    return errors::DeadlineExceeded(job, ":", task, " did not stop within the bound");
  }
  p.pid = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string LocalCluster::Log(const std::string& job, int task) const {
  auto it = processes_.find({job, task});
  if (it == processes_.end()) return "";
  std::ifstream in(it->second.log_path);
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

pid_t LocalCluster::Pid(const std::string& job, int task) const {
  auto it = processes_.find({job, task});
  return it == processes_.end() ? -1 : it->second.pid;
}

StatusOr<std::unique_ptr<Client>> LocalCluster::Connect(const std::string& job, int task,
                                                        std::chrono::milliseconds timeout) {
  return Client::Connect(io_, Address(job, task), "", timeout);
}

}  // namespace tfd::testing
