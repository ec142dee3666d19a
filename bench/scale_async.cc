#include "bench/scale_async.h"

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "bench/proc_counters.h"
#include "bench/stats.h"
#include "daemon/client/client.h"

namespace tfd::bench {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// A worker step may take this long; a stopped worker's own steps fail at it.
constexpr std::chrono::milliseconds kStepTimeout = 2s;

// v on ps:0, and for each worker w `inc_w`: v += one_w, one_w held by w, so
// each step sends a tensor from the worker to the ps and runs there.
GraphDef AsyncGraph(int workers) {
  GraphDef g;
  const AttrMap scalar{{"dtype", DType::kFloat32}, {"shape", PartialShape(std::vector<int64_t>{})}};
  g.nodes.push_back({"v", "VariableV2", {}, "/job:ps/task:0", scalar});
  g.nodes.push_back({"zero", "Const", {}, "/job:ps/task:0",
                     {{"value", Tensor::Scalar(0.0f)}, {"dtype", DType::kFloat32}}});
  g.nodes.push_back({"init", "Assign", {"v", "zero"}, "/job:ps/task:0", {}});
  for (int w = 0; w < workers; ++w) {
    const std::string one = "one_" + std::to_string(w);
    g.nodes.push_back({one, "Const", {}, "/job:worker/task:" + std::to_string(w),
                       {{"value", Tensor::Scalar(1.0f)}, {"dtype", DType::kFloat32}}});
    g.nodes.push_back({"inc_" + std::to_string(w), "AssignAdd", {"v", one}, "/job:ps/task:0", {}});
  }
  return g;
}

// One worker's steps: when each ended, and how long it took.
struct WorkerSteps {
  std::vector<Clock::time_point> ends;
  std::vector<double> millis;
  int errors = 0;
  Status setup;
};

void StepLoop(const ScaleCluster& cluster, const GraphDef& graph, int worker,
              const std::atomic<bool>& done, WorkerSteps& out) {
  auto io = kj::setupAsyncIo();
  auto address = cluster.spec().TaskAddress("worker", worker);
  if (!address.ok()) {
    out.setup = address.status();
    return;
  }
  auto client = Client::Connect(io, *address, "", 30s);
  if (!client.ok()) {
    out.setup = client.status();
    return;
  }
  out.setup = (*client)->CreateSession(graph, kStepTimeout);
  const std::vector<std::string> targets{"inc_" + std::to_string(worker)};
  while (out.setup.ok() && !done.load()) {
    const auto start = Clock::now();
    if (!(*client)->Run({}, {}, targets, {}).ok()) {
      ++out.errors;
      continue;
    }
    out.ends.push_back(Clock::now());
    out.millis.push_back(std::chrono::duration<double, std::milli>(out.ends.back() - start).count());
  }
}

// Runs workers 0..n-1 at once; `during` runs on this thread meanwhile, and
// the workers stop when it returns.
template <typename During>
StatusOr<std::vector<WorkerSteps>> RunWorkers(const ScaleCluster& cluster, const GraphDef& graph,
                                              int n, During during) {
  std::vector<WorkerSteps> steps(static_cast<size_t>(n));
  std::atomic<bool> done{false};
  std::vector<std::thread> threads;
  for (int w = 0; w < n; ++w) {
    threads.emplace_back(StepLoop, std::cref(cluster), std::cref(graph), w, std::cref(done),
                         std::ref(steps[static_cast<size_t>(w)]));
  }
  during();
  done = true;
  for (auto& t : threads) t.join();
  for (int w = 0; w < n; ++w) {
    if (!steps[static_cast<size_t>(w)].setup.ok()) {
      return steps[static_cast<size_t>(w)].setup.WithContext("worker " + std::to_string(w));
    }
  }
  return steps;
}

// The latencies of the steps of `steps` that ended in [from, to).
std::vector<double> Window(const WorkerSteps& steps, Clock::time_point from, Clock::time_point to) {
  std::vector<double> out;
  for (size_t i = 0; i < steps.ends.size(); ++i) {
    if (steps.ends[i] >= from && steps.ends[i] < to) out.push_back(steps.millis[i]);
  }
  return out;
}

Status MeasureStopped(const ScaleCluster& cluster, const GraphDef& graph, int n,
                      double stop_seconds, FiguresJson& json) {
  const pid_t victim = cluster.Pid("worker", 1);
  Clock::time_point t1, t2, t3;
  TFD_ASSIGN_OR_RETURN(auto steps, RunWorkers(cluster, graph, n, [&] {
    t1 = Clock::now() + 500ms;  // after the sessions' first steps
    t2 = t1 + 1s;
    t3 = t2 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(stop_seconds));
    std::this_thread::sleep_until(t2);
    kill(victim, SIGSTOP);
    std::this_thread::sleep_until(t3);
    kill(victim, SIGCONT);
    std::this_thread::sleep_until(t3 + 500ms);
  }));
  std::vector<double> before, stopped;
  for (int w = 0; w < n; ++w) {
    if (w == 1) continue;
    auto b = Window(steps[static_cast<size_t>(w)], t1, t2);
    auto s = Window(steps[static_cast<size_t>(w)], t2, t3);
    before.insert(before.end(), b.begin(), b.end());
    stopped.insert(stopped.end(), s.begin(), s.end());
  }
  const std::string row = std::to_string(n) + " workers";
  json.Add("one worker stopped", row, "others' p99 before", "ms", Percentile(before, 0.99));
  json.Add("one worker stopped", row, "others' p99 while stopped", "ms", Percentile(stopped, 0.99));
  json.Add("one worker stopped", row, "others' slowest step while stopped", "ms",
           Percentile(stopped, 1));
  json.Add("one worker stopped", row, "step deadline", "ms", kStepTimeout.count());
  std::printf("  worker 1 stopped %.1f s: the other %d workers' steps p99 %.2f ms before, %.2f ms "
              "while stopped (slowest %.2f ms; deadline %lld ms); %zu steps while stopped\n",
              stop_seconds, n - 1, Percentile(before, 0.99), Percentile(stopped, 0.99),
              Percentile(stopped, 1), static_cast<long long>(kStepTimeout.count()), stopped.size());
  return OkStatus();
}

// The host's CPUs: busy and total jiffies since boot (/proc/stat's first line).
struct HostCpu {
  double busy = 0, total = 0;
};

HostCpu ReadHostCpu() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0;
  in >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq;
  return {user + nice + system + irq + softirq, user + nice + system + idle + iowait + irq + softirq};
}

// What held the aggregate rate back: the ps when it kept a CPU nearly busy
// (it runs one event loop: one CPU is all it can use for these steps), else
// the host when its CPUs were nearly all busy (workers, their clients and
// the ps together), else neither.
const char* Limit(double ps_share, double host_busy) {
  if (ps_share >= 0.9) return "the ps (its CPU is full)";
  if (host_busy >= 0.9) return "the host's CPUs (full), not the ps";
  return "neither";
}

}  // namespace

Status MeasureAsync(const ScaleCluster& cluster, const std::vector<int>& worker_counts,
                    double seconds, double stop_seconds, FiguresJson& json) {
  const int most = *std::max_element(worker_counts.begin(), worker_counts.end());
  const GraphDef graph = AsyncGraph(most);
  {
    auto io = kj::setupAsyncIo();
    TFD_ASSIGN_OR_RETURN(std::string address, cluster.spec().TaskAddress("worker", 0));
    TFD_ASSIGN_OR_RETURN(auto client, Client::Connect(io, address, "", 30s));
    TFD_RETURN_IF_ERROR(client->CreateSession(graph, kStepTimeout));
    TFD_RETURN_IF_ERROR(client->Run({}, {}, {"init"}, {}).status());
  }
  const pid_t ps = cluster.Pid("ps", 0);
  for (int n : worker_counts) {
    Clock::time_point from, to;
    ProcCounters before, after;
    HostCpu host_before, host_after;
    TFD_ASSIGN_OR_RETURN(auto steps, RunWorkers(cluster, graph, n, [&] {
      from = Clock::now() + 300ms;  // sessions made and warm
      to = from + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
      std::this_thread::sleep_until(from);
      before = ReadProcCounters(ps);
      host_before = ReadHostCpu();
      std::this_thread::sleep_until(to);
      after = ReadProcCounters(ps);
      host_after = ReadHostCpu();
    }));
    size_t total = 0;
    for (const WorkerSteps& s : steps) total += Window(s, from, to).size();
    const double rate = static_cast<double>(total) / seconds;
    const double ps_us = total == 0 ? 0 : (after - before).cpu_seconds / total * 1e6;
    const double ps_share = (after - before).cpu_seconds / seconds;
    const double host_total = host_after.total - host_before.total;
    const double host_busy = host_total > 0 ? (host_after.busy - host_before.busy) / host_total : 0;
    const std::string row = std::to_string(n) + " workers";
    json.Add("async steps", row, "steps/s", "steps/s", rate);
    json.Add("async steps", row, "ps CPU per worker-step", "us", ps_us);
    json.Add("async steps", row, "ps share of a CPU", "share", ps_share)["limited by"] =
        Limit(ps_share, host_busy);
    json.Add("async steps", row, "host busy share", "share", host_busy);
    std::printf("  async, %2d workers      %.0f steps/s, ps CPU %.1f us per worker-step (%.0f%% of "
                "a CPU), host %.0f%% busy: limited by %s\n",
                n, rate, ps_us, ps_share * 100, host_busy * 100, Limit(ps_share, host_busy));
  }
  if (most < 3 || stop_seconds <= 0) return OkStatus();
  return MeasureStopped(cluster, graph, most, stop_seconds, json);
}

}  // namespace tfd::bench
