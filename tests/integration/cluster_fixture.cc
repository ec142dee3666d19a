#include "tests/integration/cluster_fixture.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace tfd::testing {
namespace {

// A port reserved for this fixture (bench/port_reservation.h says how the
// reservation keeps other tests off it).
bench::PortReservation FreePort() {
  auto port = bench::PortReservation::Any();
  if (!port.ok()) throw std::runtime_error(port.status().ToString());
  return std::move(port).value();
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
    for (int i = 0; i < n; ++i) {
      ports_.push_back(FreePort());
      addresses.push_back("127.0.0.1:" + std::to_string(ports_.back().port()));
    }
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
