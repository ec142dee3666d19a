#include "bench/scale_cluster.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bench/delay_proxy.h"
#include "common/subprocess.h"

namespace tfd::bench {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

}  // namespace

TaskFootprint ReadFootprint(pid_t pid) {
  TaskFootprint f;
  const std::string proc = "/proc/" + std::to_string(pid);
  std::ifstream status(proc + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) f.rss_mib = std::atof(line.c_str() + 6) / 1024.0;
    if (line.rfind("Threads:", 0) == 0) f.threads = std::atoi(line.c_str() + 8);
  }
  std::ifstream rollup(proc + "/smaps_rollup");
  for (std::string line; std::getline(rollup, line);) {
    const double kib = std::atof(line.c_str() + line.find(':') + 1);
    if (line.rfind("Pss:", 0) == 0) f.pss_mib = kib / 1024.0;
    if (line.rfind("Private_", 0) == 0) f.private_mib += kib / 1024.0;
  }
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(proc + "/fd", ec)) {
    ++f.fds;
    std::error_code link_ec;
    const std::string target = fs::read_symlink(entry.path(), link_ec).string();
    if (target.rfind("socket:", 0) == 0) ++f.sockets;
  }
  return f;
}

// Each held in ports_ until the cluster goes away, so that nothing else
// drawing ports (a test, another benchmark) takes one before its task or
// the proxy binds it. A port that could not be reserved is 1, which nothing
// dials: the failure is kept in ports_status_, which Start reports first.
std::vector<int> ScaleCluster::ReservePorts(int count) {
  std::vector<int> ports;
  for (int i = 0; i < count; ++i) {
    auto port = PortReservation::Any();
    if (!port.ok()) {
      if (ports_status_.ok()) ports_status_ = port.status();
      ports.push_back(1);
      continue;
    }
    ports.push_back(port->port());
    ports_.push_back(std::move(port).value());
  }
  return ports;
}

ScaleCluster::ScaleCluster(std::string tfctl, std::string tfd, int ps, int workers,
                           std::vector<std::string> tfd_flags)
    : tfctl_(std::move(tfctl)), tfd_(std::move(tfd)), tfd_flags_(std::move(tfd_flags)) {
  const std::vector<int> ports = ReservePorts(ps + workers);
  size_t next = 0;
  for (const auto& [job, count] : {std::pair<std::string, int>{"ps", ps}, {"worker", workers}}) {
    std::vector<std::string> addresses;
    for (int i = 0; i < count; ++i) {
      addresses.push_back("127.0.0.1:" + std::to_string(ports[next++]));
      tasks_.emplace_back(job, i);
    }
    if (count > 0) spec_.AddJob(job, addresses);
  }
  char tmpl[] = "/tmp/tfd-scale-XXXXXX";
  const char* dir = mkdtemp(tmpl);
  dir_ = dir ? dir : "";
}

ScaleCluster::~ScaleCluster() {
  // Whatever tfctl stop left running (or an error path never stopped).
  for (pid_t pid : Pids()) kill(pid, SIGKILL);
  if (!dir_.empty()) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
}

Status ScaleCluster::Tfctl(const std::string& command, std::chrono::milliseconds timeout) {
  if (dir_.empty()) return errors::Internal("no run directory for the scale cluster");
  std::vector<std::string> argv{tfctl_, command, "--cluster", spec_.ToJson(),
                                "--run-dir", dir_, "--timeout",
                                std::to_string(static_cast<double>(timeout.count()) / 1000)};
  if (command == "start") {
    argv.push_back("--tfd=" + tfd_);
    for (const std::string& flag : tfd_flags_) argv.push_back("--tfd-flag=" + flag);
  }
  SubprocessOptions o;
  o.stdout_path = o.stderr_path = dir_ + "/tfctl-" + command + ".out";
  o.truncate_output = true;
  TFD_ASSIGN_OR_RETURN(Subprocess p, Subprocess::Start(argv, o));
  auto code = p.Wait(timeout + std::chrono::seconds(10));
  if (!code.ok()) {
    p.Kill();
    return errors::DeadlineExceeded("tfctl ", command, " of ", tasks_.size(),
                                    " tasks did not end within ", timeout.count() / 1000 + 10,
                                    " s");
  }
  if (*code != 0) {
    return errors::Internal("tfctl ", command, " of ", tasks_.size(), " tasks exited with ", *code,
                            ":\n", ReadAll(o.stdout_path));
  }
  return OkStatus();
}

Status ScaleCluster::RouteThrough(DelayProxy& proxy) {
  if (!listen_.jobs().empty()) return errors::FailedPrecondition("the cluster is routed already");
  // The proxy listens at the spec's ports, the tasks at others. Both are
  // reserved, so the new ones are never the spec's.
  auto port_of = [](const std::string& address) {
    return std::atoi(address.c_str() + address.rfind(':') + 1);
  };
  const std::vector<int> ports = ReservePorts(static_cast<int>(tasks_.size()));
  TFD_RETURN_IF_ERROR(ports_status_.WithContext("reserving the tasks' ports"));
  size_t next = 0;
  for (const auto& [job, addresses] : spec_.jobs()) {
    std::vector<std::string> listen;
    for (const std::string& address : addresses) {
      const int port = ports[next++];
      TFD_RETURN_IF_ERROR(proxy.Forward(port, port_of(address)).status());
      listen.push_back("127.0.0.1:" + std::to_string(port));
    }
    listen_.AddJob(job, listen);
  }
  return OkStatus();
}

StatusOr<std::string> ScaleCluster::ListenAddress(const std::string& job, int task) const {
  return listen_.jobs().empty() ? spec_.TaskAddress(job, task) : listen_.TaskAddress(job, task);
}

Status ScaleCluster::Start(std::chrono::milliseconds timeout) {
  TFD_RETURN_IF_ERROR(ports_status_.WithContext("reserving the cluster's ports"));
  return listen_.jobs().empty() ? Tfctl("start", timeout) : StartEachTask(timeout);
}

// `tfctl start` takes one --listen for all the tasks it starts: one tfctl
// per task, all at once, as a user would start each task on its own host.
Status ScaleCluster::StartEachTask(std::chrono::milliseconds timeout) {
  std::vector<Subprocess> tfctls;
  std::vector<std::string> outputs;
  for (const auto& [job, task] : tasks_) {
    TFD_ASSIGN_OR_RETURN(const std::string listen, listen_.TaskAddress(job, task));
    std::vector<std::string> argv{
        tfctl_, "start", "--cluster", spec_.ToJson(), "--job", job, "--task",
        std::to_string(task), "--run-dir", dir_, "--timeout",
        std::to_string(static_cast<double>(timeout.count()) / 1000), "--tfd=" + tfd_,
        "--tfd-flag=--listen=" + listen};
    for (const std::string& flag : tfd_flags_) argv.push_back("--tfd-flag=" + flag);
    SubprocessOptions o;
    o.stdout_path = o.stderr_path = dir_ + "/tfctl-start-" + job + "-" + std::to_string(task) + ".out";
    o.truncate_output = true;
    TFD_ASSIGN_OR_RETURN(Subprocess p, Subprocess::Start(argv, o));
    tfctls.push_back(std::move(p));
    outputs.push_back(o.stdout_path);
  }
  Status first = OkStatus();
  for (size_t i = 0; i < tfctls.size(); ++i) {
    auto code = tfctls[i].Wait(timeout + std::chrono::seconds(10));
    if (!code.ok()) tfctls[i].Kill();
    if (first.ok() && (!code.ok() || *code != 0)) {
      first = errors::Internal("tfctl start of ", tasks_[i].first, " ", tasks_[i].second,
                               " failed:\n", ReadAll(outputs[i]));
    }
  }
  return first;
}

Status ScaleCluster::Stop(std::chrono::milliseconds timeout) { return Tfctl("stop", timeout); }

pid_t ScaleCluster::Pid(const std::string& job, int task) const {
  std::ifstream in(dir_ + "/" + job + "-" + std::to_string(task) + ".pid");
  pid_t pid = -1;
  if (!(in >> pid) || pid <= 0) return -1;
  // Gone (or reaped and the pid reused by something that is not a tfd).
  std::ifstream cmdline("/proc/" + std::to_string(pid) + "/cmdline");
  std::string argv0;
  if (!std::getline(cmdline, argv0, '\0') || argv0 != tfd_) return -1;
  return pid;
}

std::vector<pid_t> ScaleCluster::Pids() const {
  std::vector<pid_t> pids;
  for (const auto& [job, task] : tasks_) {
    if (pid_t pid = Pid(job, task); pid > 0) pids.push_back(pid);
  }
  return pids;
}

}  // namespace tfd::bench
