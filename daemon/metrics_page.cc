#include "daemon/metrics_page.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "common/memory_budget.h"
#include "common/resource_mgr.h"
#include "daemon/transport/data_plane.h"
#include "kernels/framework/resource.h"

namespace tfd {
namespace {

using Labels = std::initializer_list<std::pair<const char*, std::string>>;

// Writes families in the text format: a HELP and a TYPE line, then samples.
class Exposition {
 public:
  void Family(const char* name, const char* type, const char* help) {
    out_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  }
  template <typename Value>
  void Sample(std::string_view name, Labels labels, Value value) {
    out_ += name;
    if (labels.size() > 0) {
      out_ += '{';
      bool first = true;
      for (const auto& [key, text] : labels) {
        out_ += fmt::format("{}{}=\"{}\"", first ? "" : ",", key, Escape(text));
        first = false;
      }
      out_ += '}';
    }
    out_ += fmt::format(" {}\n", value);
  }
  // A histogram's cumulative buckets, sum and count.
  void Histogram(const char* name, const char* help, const LatencyHistogram::Snapshot& h) {
    Family(name, "histogram", help);
    const std::string base = name;
    uint64_t cumulative = 0;
    for (size_t i = 0; i < LatencyHistogram::kBounds.size(); ++i) {
      cumulative += h.buckets[i];
      Sample(base + "_bucket", {{"le", fmt::format("{}", LatencyHistogram::kBounds[i])}},
             cumulative);
    }
    Sample(base + "_bucket", {{"le", "+Inf"}}, h.count);
    Sample(base + "_sum", {}, h.sum_seconds);
    Sample(base + "_count", {}, h.count);
  }
  // One sample per error code, OK included, so rates exist before the
  // first failure.
  void ByCode(const char* name, const char* help, const std::array<uint64_t, kNumCodes>& counts) {
    Family(name, "counter", help);
    for (int i = 0; i < kNumCodes; ++i) {
      Sample(name, {{"code", std::string(CodeName(static_cast<Code>(i)))}}, counts[i]);
    }
  }
  std::string Take() { return std::move(out_); }

 private:
  // Label values escape backslash, double quote and newline.
  static std::string Escape(const std::string& text) {
    std::string out;
    for (char c : text) {
      if (c == '\\') out += "\\\\";
      else if (c == '"') out += "\\\"";
      else if (c == '\n') out += "\\n";
      else out += c;
    }
    return out;
  }

  std::string out_;
};

// Resident set size from /proc/self/statm; 0 where it cannot be read.
uint64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0, resident = 0;
  if (!(statm >> pages >> resident)) return 0;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

double CpuSeconds() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec * 1e-6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

size_t OpenFiles() {
  std::error_code ec;
  size_t n = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return n;
}

double UnixSeconds(std::chrono::system_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

// The process, under the names Prometheus's client libraries use.
void AddProcess(const TaskEnv& env, Exposition& page) {
  const auto started = std::chrono::system_clock::now() -
                       std::chrono::duration_cast<std::chrono::system_clock::duration>(
                           std::chrono::steady_clock::now() - env.started);
  page.Family("process_start_time_seconds", "gauge", "When tfd started, in Unix time.");
  page.Sample("process_start_time_seconds", {}, UnixSeconds(started));
  page.Family("process_resident_memory_bytes", "gauge", "Resident memory of tfd.");
  page.Sample("process_resident_memory_bytes", {}, ResidentBytes());
  page.Family("process_cpu_seconds_total", "counter", "User and system CPU time of tfd.");
  page.Sample("process_cpu_seconds_total", {}, CpuSeconds());
  page.Family("process_open_fds", "gauge", "File descriptors tfd holds open.");
  page.Sample("process_open_fds", {}, OpenFiles());
}

// Runs, partitions, RPC errors, sessions and registered graphs.
void AddSteps(const TaskEnv& env, Exposition& page) {
  const TaskMetrics& m = env.metrics;
  page.ByCode("tfd_runs_total",
              "Session.run and Callable.run calls this task answered as master, by code.",
              m.runs.outcomes.Read());
  page.Histogram("tfd_run_duration_seconds",
                 "Time from a run's arrival at this master to its answer.", m.runs.seconds.Read());
  page.ByCode("tfd_partition_steps_total",
              "Partitions of steps this task ran (its own part of a run, or another master's), by code.",
              m.partition_steps.outcomes.Read());
  page.Histogram("tfd_partition_step_duration_seconds",
                 "Time this task spent on one partition of a step.",
                 m.partition_steps.seconds.Read());
  page.Family("tfd_steps_running", "gauge", "Partitions of steps running on this task now.");
  page.Sample("tfd_steps_running", {}, env.steps.size());

  page.Family("tfd_rpc_errors_total", "counter",
              "Calls this task answered with an error, by method and code.");
  for (const auto& [key, count] : m.RpcFailures()) {
    page.Sample("tfd_rpc_errors_total",
                {{"method", key.first}, {"code", std::string(CodeName(key.second))}}, count);
  }

  page.Family("tfd_sessions", "gauge", "Sessions open on this task as master.");
  page.Sample("tfd_sessions", {}, env.sessions.load());
  page.Family("tfd_registered_graphs", "gauge", "Partitions this task holds, ready to run.");
  page.Sample("tfd_registered_graphs", {}, env.registered_graphs.load());
}

// A resource as the page shows it: its name ("container/name" outside the
// default container) and what it says of itself.
struct DescribedResource {
  std::string name;
  kernels::ResourceDescription description;
};

std::vector<DescribedResource> DescribeResources(const TaskEnv& env) {
  std::vector<DescribedResource> out;
  if (env.kernel_env == nullptr || env.kernel_env->resources == nullptr) return out;
  for (const auto& [key, base] : env.kernel_env->resources->List()) {
    auto resource = std::dynamic_pointer_cast<kernels::Resource>(base);
    if (resource == nullptr) continue;  // a runtime helper, not state a user made
    out.push_back({key.container.empty() ? key.name : key.container + "/" + key.name,
                   resource->Describe()});
  }
  return out;
}

// Each gauge a kind of resource reports, as the family tfd_<kind>_<gauge>
// with one sample per resource (tfd_queue_size{queue="q"}); families in the
// order the resources first report them.
void AddResourceGauges(const std::vector<DescribedResource>& resources, Exposition& page) {
  std::vector<std::pair<std::string, std::string>> families;  // name, help
  for (const auto& r : resources) {
    for (const auto& g : r.description.gauges) {
      std::string family = "tfd_" + r.description.kind + "_" + g.name;
      if (std::none_of(families.begin(), families.end(),
                       [&](const auto& f) { return f.first == family; })) {
        families.emplace_back(std::move(family), g.help);
      }
    }
  }
  for (const auto& [family, help] : families) {
    page.Family(family.c_str(), "gauge", help.c_str());
    for (const auto& r : resources) {
      for (const auto& g : r.description.gauges) {
        if ("tfd_" + r.description.kind + "_" + g.name != family) continue;
        page.Sample(family, {{r.description.kind.c_str(), r.name}}, g.value);
      }
    }
  }
}

// Resources, as each describes itself (kernels/framework/resource.h):
// variables by state, every kind counted, and the gauges of each.
void AddResources(const TaskEnv& env, Exposition& page) {
  const std::vector<DescribedResource> resources = DescribeResources(env);
  size_t variables = 0, initialized = 0;
  std::map<std::string, size_t> kinds;
  for (const auto& r : resources) {
    ++kinds[r.description.kind];
    if (r.description.kind != kernels::kVariableKind) continue;
    ++variables;
    if (r.description.initialized) ++initialized;
  }
  page.Family("tfd_variables", "gauge", "Variables this task holds, by whether initialized.");
  page.Sample("tfd_variables", {{"state", "initialized"}}, initialized);
  page.Sample("tfd_variables", {{"state", "uninitialized"}}, variables - initialized);
  page.Family("tfd_resources", "gauge",
              "Variables, queues, datasets and other resources this task holds, by kind.");
  for (const auto& [kind, count] : kinds) page.Sample("tfd_resources", {{"kind", kind}}, count);
  AddResourceGauges(resources, page);
}

// What crossed the data plane, by peer, and what it refused.
void AddDataPlane(const TaskEnv& env, Exposition& page) {
  if (env.data_plane != nullptr) {
    const auto& traffic = env.data_plane->traffic();
    page.Family("tfd_data_plane_sent_bytes_total", "counter",
                "Tensor bytes this task pushed to each task over the data plane.");
    for (const auto& [task, t] : traffic) {
      page.Sample("tfd_data_plane_sent_bytes_total", {{"peer", task}}, t.bytes_sent);
    }
    page.Family("tfd_data_plane_received_bytes_total", "counter",
                "Tensor bytes each task pushed to this one over the data plane.");
    for (const auto& [task, t] : traffic) {
      page.Sample("tfd_data_plane_received_bytes_total", {{"peer", task}}, t.bytes_received);
    }
    const DataPlane::Stats stats = env.data_plane->stats();
    page.Family("tfd_data_plane_pushes_refused_total", "counter",
                "Pushes refused: a bad ticket or header, or too big for --max-received-bytes.");
    page.Sample("tfd_data_plane_pushes_refused_total", {}, stats.pushes_refused);
    page.Family("tfd_data_plane_step_messages_sent_total", "counter",
                "Step-channel messages sent: runs this task's master started on others, answers "
                "to theirs, cancels.");
    page.Sample("tfd_data_plane_step_messages_sent_total", {}, stats.step_messages_sent);
    page.Family("tfd_data_plane_step_messages_received_total", "counter",
                "Step-channel messages taken in and handed on (refused ones not counted).");
    page.Sample("tfd_data_plane_step_messages_received_total", {}, stats.step_messages_received);
    page.Family("tfd_data_plane_step_messages_refused_total", "counter",
                "Step-channel messages refused: a bad ticket, malformed, or an impossible size.");
    page.Sample("tfd_data_plane_step_messages_refused_total", {}, stats.step_messages_refused);
    page.Family("tfd_data_plane_held_back_total", "counter",
                "Pushes that waited for room under --max-received-bytes.");
    page.Sample("tfd_data_plane_held_back_total", {}, stats.held_back);
  }
}

// The memory budget, used and limit.
void AddMemory(const TaskEnv& env, Exposition& page) {
  if (env.kernel_env != nullptr && env.kernel_env->memory != nullptr) {
    page.Family("tfd_memory_budget_used_bytes", "gauge",
                "Bytes of tensors charged to the memory budget now.");
    page.Sample("tfd_memory_budget_used_bytes", {}, env.kernel_env->memory->used());
    page.Family("tfd_memory_budget_limit_bytes", "gauge", "The memory budget (--memory-budget).");
    page.Sample("tfd_memory_budget_limit_bytes", {}, env.kernel_env->memory->limit());
  }
}

// This task's checkpoints, and the cluster checkpoints it saved as master.
void AddCheckpoints(const TaskEnv& env, Exposition& page) {
  const TaskMetrics& m = env.metrics;
  page.Family("tfd_checkpoints_saved_total", "counter", "Checkpoints this task saved.");
  page.Sample("tfd_checkpoints_saved_total", {}, m.checkpoints_saved());
  page.Family("tfd_checkpoint_last_success_timestamp_seconds", "gauge",
              "When this task last saved a checkpoint, in Unix time; 0 before the first.");
  const auto last = m.last_checkpoint();
  page.Sample("tfd_checkpoint_last_success_timestamp_seconds", {}, last ? UnixSeconds(*last) : 0.0);

  // Cluster checkpoints this task saved as master (the chief's task, for a
  // trainer's): a failure means no new step is complete on every task.
  const SaveCounts& cluster = m.cluster_checkpoints;
  page.Family("tfd_cluster_checkpoints_saved_total", "counter",
              "Cluster checkpoints this task saved as master, complete on every task.");
  page.Sample("tfd_cluster_checkpoints_saved_total", {}, cluster.saved());
  page.Family("tfd_checkpoint_save_failures_total", "counter",
              "Cluster checkpoints this task tried to save as master that some task could not "
              "write or commit (its error is in this task's log).");
  page.Sample("tfd_checkpoint_save_failures_total", {}, cluster.failed());
  page.Family("tfd_cluster_checkpoint_last_success_timestamp_seconds", "gauge",
              "When this task as master last saved a cluster checkpoint complete on every task, "
              "in Unix time; 0 before the first.");
  const auto last_cluster = cluster.last_success();
  page.Sample("tfd_cluster_checkpoint_last_success_timestamp_seconds", {},
              last_cluster ? UnixSeconds(*last_cluster) : 0.0);
}

}  // namespace

std::string RenderMetrics(const TaskEnv& env, const std::string& version) {
  Exposition page;
  page.Family("tfd_build_info", "gauge", "1, labelled with tfd's version and this task.");
  page.Sample("tfd_build_info", {{"version", version}, {"task", env.task}}, 1);
  AddProcess(env, page);
  AddSteps(env, page);
  AddResources(env, page);
  AddDataPlane(env, page);
  AddMemory(env, page);
  AddCheckpoints(env, page);
  return page.Take();
}

}  // namespace tfd
