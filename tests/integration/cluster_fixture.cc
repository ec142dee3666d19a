#include "tests/integration/cluster_fixture.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

namespace tfd::testing {
namespace {

// A port free right now on 127.0.0.1, below the kernel's ephemeral range:
// a port inside it (what binding port 0 gives) can be taken as the source
// port of another test's outgoing connection before the task binds it.
int FreePort() {
  int low = 32768, high = 60999;
  if (std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range"); range) range >> low >> high;
  const int first = low - 10000 >= 1000 ? 10000 : 1024;
  static std::mt19937 rng{std::random_device{}()};
  std::uniform_int_distribution<int> pick(first, low - 1);
  for (int attempt = 0; attempt < 200; ++attempt) {
    const int port = pick(rng);
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) break;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    const bool free = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    close(fd);
    if (free) return port;
  }
  throw std::runtime_error("no free port below the ephemeral range on 127.0.0.1");
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
  // Every task gets SIGTERM before any is waited on, so they stop together.
  for (auto& [key, p] : processes_) p.process.Signal(SIGTERM);
  for (auto& [key, p] : processes_) p.process.Stop(std::chrono::seconds(10));
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
  if (p.process.running()) return errors::AlreadyExists(job, ":", task, " is running");
  p.log_path = dir_ + "/" + job + "-" + std::to_string(task) + ".log";
  std::vector<std::string> args = {TfdBinary(), "--cluster", spec_.ToJson(), "--job", job,
                                   "--task", std::to_string(task)};
  args.insert(args.end(), extra_flags_.begin(), extra_flags_.end());
  args.insert(args.end(), flags.begin(), flags.end());
  SubprocessOptions o;
  o.stdout_path = "/dev/null";
  o.stderr_path = p.log_path;
  o.max_open_files = open_files_;
  o.cpu = cpu_;
  o.stop_grace = std::chrono::seconds(10);
  TFD_ASSIGN_OR_RETURN(p.process, Subprocess::Start(args, o));
  return OkStatus();
}

Status LocalCluster::StartAll() {
  for (const auto& [job, tasks] : spec_.jobs()) {
    for (int i = 0; i < static_cast<int>(tasks.size()); ++i) TFD_RETURN_IF_ERROR(Start(job, i));
  }
  return OkStatus();
}

void LocalCluster::Kill(const std::string& job, int task) {
  processes_[{job, task}].process.Kill();
}

StatusOr<int> LocalCluster::Stop(const std::string& job, int task, std::chrono::milliseconds timeout) {
  Subprocess& p = processes_[{job, task}].process;
  if (!p.running()) return errors::NotFound(job, ":", task, " is not running");
  p.Signal(SIGTERM);
  auto status = p.Wait(timeout);
  if (!status.ok()) {
    p.Kill();
    return errors::DeadlineExceeded(job, ":", task, " did not stop within the bound");
  }
  return *status;
}

StatusOr<int> LocalCluster::Wait(const std::string& job, int task,
                                 std::chrono::milliseconds timeout) {
  Subprocess& p = processes_[{job, task}].process;
  if (!p.running()) return errors::NotFound(job, ":", task, " is not running");
  return p.Wait(timeout);
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
  return it == processes_.end() ? -1 : it->second.process.pid();
}

StatusOr<std::unique_ptr<Client>> LocalCluster::Connect(const std::string& job, int task,
                                                        std::chrono::milliseconds timeout) {
  return Client::Connect(io_, Address(job, task), "", timeout);
}

}  // namespace tfd::testing
