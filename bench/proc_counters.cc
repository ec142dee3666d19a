#include "bench/proc_counters.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace tfd::bench {

std::string ProcLine(const std::string& path, const std::string& prefix) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) == 0) {
      const size_t colon = prefix.empty() ? std::string::npos : line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  }
  return "?";
}

ProcCounters ProcCounters::operator-(const ProcCounters& o) const {
  return {cpu_seconds - o.cpu_seconds, runqueue_seconds - o.runqueue_seconds,
          system_seconds - o.system_seconds, minor_faults - o.minor_faults,
          context_switches - o.context_switches};
}

ProcCounters ProcCounters::operator/(double n) const {
  return {cpu_seconds / n, runqueue_seconds / n, system_seconds / n, minor_faults / n,
          context_switches / n};
}

ProcCounters ReadProcCounters(pid_t pid) {
  ProcCounters c;
  const std::string dir = "/proc/" + std::to_string(pid);
  std::ifstream stat(dir + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return c;
  // Fields after the command, which is in parentheses and may hold spaces:
  // state(3) ... minflt(10) ... stime(15), numbered as in proc(5).
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return c;
  std::istringstream in(line.substr(close + 2));
  std::string field;
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  for (int i = 3; i <= 15 && in >> field; ++i) {
    if (i == 10) c.minor_faults = std::stod(field);
    if (i == 15) c.system_seconds = std::stod(field) / tick;
  }
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator(dir + "/task", ec)) {
    std::ifstream sched(task.path() / "schedstat");
    double on_cpu_ns = 0, waiting_ns = 0;
    if (sched >> on_cpu_ns >> waiting_ns) {
      c.cpu_seconds += on_cpu_ns * 1e-9;
      c.runqueue_seconds += waiting_ns * 1e-9;
    }
    std::ifstream status(task.path() / "status");
    while (std::getline(status, line)) {
      if (line.find("ctxt_switches:") != std::string::npos) {
        c.context_switches += std::stod(line.substr(line.find(':') + 1));
      }
    }
  }
  return c;
}

CounterWatch::CounterWatch(std::vector<pid_t> pids)
    : pids_(std::move(pids)), before_(pids_.size()) {}

TimedSection CounterWatch::Section(int runs, std::vector<ProcCounters>* per_run) {
  return [this, runs, per_run](bool begin) {
    if (begin) {
      for (size_t i = 0; i < pids_.size(); ++i) before_[i] = ReadProcCounters(pids_[i]);
      return;
    }
    per_run->clear();
    for (size_t i = 0; i < pids_.size(); ++i) {
      per_run->push_back((ReadProcCounters(pids_[i]) - before_[i]) / runs);
    }
  };
}

namespace {

// A "Key:   N kB" line of /proc/PID/status, in bytes.
size_t StatusBytes(pid_t pid, const std::string& key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) {
      return std::strtoull(line.c_str() + key.size(), nullptr, 10) * 1024;
    }
  }
  return 0;
}

}  // namespace

size_t PeakRssBytes(pid_t pid) { return StatusBytes(pid, "VmHWM:"); }

size_t RssBytes(pid_t pid) { return StatusBytes(pid, "VmRSS:"); }

}  // namespace tfd::bench
