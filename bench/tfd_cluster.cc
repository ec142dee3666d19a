#include "bench/tfd_cluster.h"

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "bench/raw_tcp.h"

namespace tfd::bench {

using namespace std::chrono_literals;

BenchCluster::BenchCluster(std::string tfd_path,
                           const std::vector<std::pair<std::string, std::vector<TaskCpus>>>& jobs,
                           std::vector<std::string> daemon_flags)
    : tfd_path_(std::move(tfd_path)), daemon_flags_(std::move(daemon_flags)) {
  for (const auto& [job, cpus] : jobs) {
    std::vector<std::string> addresses;
    for (size_t i = 0; i < cpus.size(); ++i) {
      addresses.push_back(ReserveAddress());
      cpus_[{job, static_cast<int>(i)}] = cpus[i].cpus;
    }
    spec_.AddJob(job, addresses);
  }
  char tmpl[] = "/tmp/tfd-bench-XXXXXX";
  const char* dir = mkdtemp(tmpl);
  dir_ = dir ? dir : "/tmp";
}

// Reserved until the cluster goes away, so that nothing else drawing ports
// (a test, another benchmark) takes it before the daemon binds it.
std::string BenchCluster::ReserveAddress() {
  auto port = PortReservation::Any();
  if (!port.ok()) {
    if (ports_status_.ok()) ports_status_ = port.status();
    return "127.0.0.1:1";  // never dialled: Start reports ports_status_ first
  }
  ports_.push_back(std::move(port).value());
  return "127.0.0.1:" + std::to_string(ports_.back().port());
}

BenchCluster::~BenchCluster() {
  // Every task gets SIGTERM before any is waited on, so they stop together.
  for (auto& [key, p] : processes_) {
    p.Signal(SIGTERM);
  }
  processes_.clear();  // ~Subprocess waits, and kills what does not stop
  if (dir_ != "/tmp") {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

void BenchCluster::HostHere(const std::string& job, int task) { cpus_.erase({job, task}); }

std::string BenchCluster::Log(const std::string& job, int task) const {
  std::ifstream in(dir_ + "/" + job + "-" + std::to_string(task) + ".log");
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

Status BenchCluster::Start(kj::AsyncIoContext& io) {
  TFD_RETURN_IF_ERROR(ports_status_.WithContext("reserving the cluster's ports"));
  for (const auto& [key, cpus] : cpus_) {
    const auto& [job, task] = key;
    const std::string log = dir_ + "/" + job + "-" + std::to_string(task) + ".log";
    std::vector<std::string> argv{tfd_path_, "--cluster", spec_.ToJson(), "--job", job,
                                  "--task", std::to_string(task), "--log-level", "warn"};
    argv.insert(argv.end(), daemon_flags_.begin(), daemon_flags_.end());
    // Pinned before it runs anything, so the daemon sizes its pools by its set.
    SubprocessOptions o = BenchChild(-1);
    o.cpus = cpus;
    o.stdout_path = "/dev/null";
    o.stderr_path = log;
    TFD_ASSIGN_OR_RETURN(Subprocess p, Subprocess::Start(argv, o));
    processes_[key] = std::move(p);
  }
  // Short connection attempts, so a daemon that exits at once (a taken
  // port, a bad binary) is reported at once, not after the whole bound.
  for (auto& [key, p] : processes_) {
    const std::string name = "/job:" + key.first + "/task:" + std::to_string(key.second);
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    for (;;) {
      TFD_ASSIGN_OR_RETURN(std::string address, spec_.TaskAddress(key.first, key.second));
      auto client = Client::Connect(io, address, "", 500ms);
      if (client.ok()) break;
      if (p.Exited() || std::chrono::steady_clock::now() > deadline) {
        return Status(client.status().code(), name + " did not start (" +
                                                  client.status().message() + "); its log:\n" +
                                                  Log(key.first, key.second));
      }
    }
  }
  return OkStatus();
}

StatusOr<std::unique_ptr<Client>> BenchCluster::Connect(kj::AsyncIoContext& io,
                                                        const std::string& job, int task) {
  TFD_ASSIGN_OR_RETURN(std::string address, spec_.TaskAddress(job, task));
  return Client::Connect(io, address, "", 20s);
}

pid_t BenchCluster::Pid(const std::string& job, int task) const {
  auto it = processes_.find({job, task});
  return it == processes_.end() ? -1 : it->second.pid();
}

std::string BenchCluster::Placement(const std::string& job, int task) const {
  const pid_t pid = Pid(job, task);
  if (pid < 0) return "not running";
  const std::string proc = "/proc/" + std::to_string(pid);
  std::ifstream status(proc + "/status");
  std::string line, cpus = "?";
  while (std::getline(status, line)) {
    if (line.rfind("Cpus_allowed_list:", 0) == 0) cpus = line.substr(line.find(':') + 1);
  }
  cpus.erase(0, cpus.find_first_not_of(" \t"));
  int compute = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(proc + "/task", ec)) {
    std::ifstream comm(entry.path() / "comm");
    std::string name;
    if (std::getline(comm, name) && name.rfind("compute", 0) == 0) ++compute;
  }
  return "CPUs " + cpus + ", " + std::to_string(compute) + " compute threads";
}

Status BenchCluster::Stop() {
  for (auto& [key, p] : processes_) {
    p.Signal(SIGTERM);
  }
  Status first;
  for (auto& [key, p] : processes_) {
    const int code = p.Stop(10s);
    if (code != 0 && first.ok()) {
      first = errors::Internal("/job:", key.first, "/task:", key.second, " exited with ", code,
                               "; its log:\n", Log(key.first, key.second));
    }
  }
  return first;
}

}  // namespace tfd::bench
