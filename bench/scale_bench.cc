// scale_bench: what grows with the number of tasks (issue 39). For each N
// in --tasks, a cluster of N tfd daemons on loopback (--ps of them ps, the
// rest workers; worker 0 is the master), started with `tfctl start` as a user
// would, then:
//   - start: `tfctl start` alone, then until worker 0's waitCluster says every
//     task answers (ready), then until the first fan-out step is done;
//   - control: waitCluster and the init barrier (waitInitialized of a
//     variable on each ps) on the ready cluster, and session creation;
//   - fan-out: a step with a NoOp on every task as its targets (one local
//     partition, N-1 remote), its p50/p99 latency, and the CPU every process
//     (each task and this client) spent per step, per remote partition;
//   - per task: RSS, file descriptors, sockets and threads, idle (after
//     ready) and after the fan-out steps, the master apart from the rest;
//   - stop: `tfctl stop` of every task.
// First, the yardstick of the fan-out's CPU: a raw TCP round trip of one byte
// between this process and a forked echo (bench/raw_tcp.h), both asleep
// between messages as a task is: the CPU both spend per round trip.
// Then, on 1 ps and as many workers as --async-workers' largest, async
// training steps (bench/scale_async.h): steps/s and the ps's CPU per
// worker-step against the number of workers, and one worker SIGSTOPped.
// With --delay-us, each size once per delay with a delaying proxy between
// the tasks (bench/scale_delay.h), one async worker's step measured in each
// cluster instead of the async sweep. With --sync-workers, sync replicas on
// 1 ps (bench/scale_sync.h): the update's latency from the steps' traces.
//
//   scale_bench [--tfctl PATH] [--tfd PATH] [--tasks 4,8,16,32,64] [--ps N]
//               [--steps N] [--async-workers 1,2,4,8,16,32] [--async-seconds S]
//               [--delay-us 0,100,1000] [--sync-workers 1,2,4,8] [--json FILE]
//
// Exit status: 0 after printing; 1 when a cluster fails; 2 for bad flags.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_child.h"
#include "bench/bench_flags.h"
#include "bench/figures_json.h"
#include "bench/proc_counters.h"
#include "bench/raw_tcp.h"
#include "bench/scale_async.h"
#include "bench/scale_cluster.h"
#include "bench/scale_delay.h"
#include "bench/scale_sync.h"
#include "bench/stats.h"
#include "daemon/client/client.h"

#ifndef TFD_DEFAULT_PATH
#define TFD_DEFAULT_PATH "tfd"
#endif
#ifndef TFCTL_DEFAULT_PATH
#define TFCTL_DEFAULT_PATH "tfctl"
#endif

namespace tfd::bench {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr std::chrono::milliseconds kTimeout = 60s;
constexpr int kWarmSteps = 20;  // fan-out steps before the measured ones

struct ScaleSetup {
  std::string tfctl = TFCTL_DEFAULT_PATH;
  std::string tfd;
  std::vector<int> sizes{4, 8, 16, 32, 64};
  int ps = 0;  // 0: N/8
  int steps = 200;
  std::vector<int> async_workers{1, 2, 4, 8, 16, 32};
  double async_seconds = 2;
  std::string json_path;
  std::vector<int> delays_us;  // empty: no proxy
  std::vector<int> sync_workers;  // empty: none
  // Measured before the clusters (MeasureRawRoundTrip), for the ratio.
  double raw_round_trip_cpu_us = 0;
};

// The command line into `o`; exits on --help or a bad flag.
void ParseFlags(int argc, char** argv, ScaleSetup& o) {
  BenchFlags flags("scale_bench", "N tfd tasks on loopback, started and stopped with tfctl: "
                                  "start-up, fan-out steps, barriers and footprints against N");
  flags.Text("tfctl", "PATH", "the tfctl binary", &o.tfctl)
      .ShownDefault("the one built with this bench")
      .TfdBinary(TFD_DEFAULT_PATH, &o.tfd)
      .IntList("tasks", 2, 256, "cluster sizes", &o.sizes)
      .Int("ps", 1, 64, "ps tasks in each cluster", &o.ps)
      .ShownDefault("N/8, at least 1")
      .Int("steps", 1, 1000000, "fan-out steps measured per size", &o.steps)
      .IntList("async-workers", 0, 255, "worker counts of the async steps; 0: none",
               &o.async_workers)
      .Number("async-seconds", 0.1, 3600, "seconds each count steps", &o.async_seconds)
      .IntList("delay-us", 0, 1000000, "one-way delays of the links between tasks: each size "
               "runs once per delay through a delaying proxy (0: the proxy alone); the async "
               "sweep is then not run", &o.delays_us)
      .ShownDefault("no proxy")
      .IntList("sync-workers", 1, 255, "worker counts of sync replicas on 1 ps, each its own "
               "cluster for --async-seconds: the update's latency from the steps' traces",
               &o.sync_workers)
      .ShownDefault("none")
      .Json(&o.json_path);
  flags.ParseOrExit(argc, argv);
  if (o.async_workers == std::vector<int>{0}) o.async_workers.clear();
  for (int n : o.sizes) {
    if (o.ps >= n) {
      std::fprintf(stderr, "scale_bench: error: --ps %d leaves no worker in %d tasks\n", o.ps, n);
      std::exit(2);
    }
  }
}

std::string TaskDevice(const std::string& job, int task) {
  return "/job:" + job + "/task:" + std::to_string(task);
}

// A NoOp on every task (the fan-out step's targets), and a scalar variable
// on each ps with its initializer (the init barrier's names).
struct FanOutGraph {
  GraphDef graph;
  std::vector<std::string> noops, variables, inits;
};

FanOutGraph MakeGraph(const ScaleCluster& cluster) {
  FanOutGraph g;
  for (const auto& [job, task] : cluster.tasks()) {
    const std::string suffix = "_" + job + "_" + std::to_string(task);
    const std::string device = TaskDevice(job, task);
    g.graph.nodes.push_back({"noop" + suffix, "NoOp", {}, device, {}});
    g.noops.push_back("noop" + suffix);
    if (job != "ps") continue;
    g.graph.nodes.push_back(
        {"v" + suffix, "VariableV2", {}, device,
         {{"dtype", DType::kFloat32}, {"shape", PartialShape(std::vector<int64_t>{})}}});
    g.graph.nodes.push_back({"one" + suffix, "Const", {}, device,
                             {{"value", Tensor::Scalar(1.0f)}, {"dtype", DType::kFloat32}}});
    g.graph.nodes.push_back({"init" + suffix, "Assign", {"v" + suffix, "one" + suffix}, device, {}});
    g.variables.push_back("v" + suffix);
    g.inits.push_back("init" + suffix);
  }
  return g;
}

double Millis(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// The footprints of the tasks other than worker 0 (the master), and the
// master's, as figures of `table`.
void AddFootprints(FiguresJson& json, const ScaleCluster& cluster, const std::string& table,
                   const std::string& row) {
  std::vector<double> rss, pss, private_mib, fds, sockets, threads;
  TaskFootprint master;
  for (const auto& [job, task] : cluster.tasks()) {
    const TaskFootprint f = ReadFootprint(cluster.Pid(job, task));
    if (job == "worker" && task == 0) {
      master = f;
      continue;
    }
    rss.push_back(f.rss_mib);
    pss.push_back(f.pss_mib);
    private_mib.push_back(f.private_mib);
    fds.push_back(f.fds);
    sockets.push_back(f.sockets);
    threads.push_back(f.threads);
  }
  json.AddSamples(table, row, "RSS per task", "MiB", rss);
  json.AddSamples(table, row, "PSS per task", "MiB", pss);
  json.AddSamples(table, row, "private memory per task", "MiB", private_mib);
  json.AddSamples(table, row, "fds per task", "fds", fds);
  json.AddSamples(table, row, "sockets per task", "sockets", sockets);
  json.AddSamples(table, row, "threads per task", "threads", threads);
  json.Add(table, row, "master RSS", "MiB", master.rss_mib);
  json.Add(table, row, "master fds", "fds", master.fds);
  json.Add(table, row, "master sockets", "sockets", master.sockets);
  json.Add(table, row, "master threads", "threads", master.threads);
  std::printf("  %-22s RSS %.1f MiB (max %.1f; PSS %.1f, private %.1f), fds %.0f (max %.0f), "
              "sockets %.0f, threads %.0f; master: %.1f MiB, %d fds, %d sockets, %d threads\n",
              table.c_str(), Median(rss), Percentile(rss, 1), Median(pss), Median(private_mib),
              Median(fds), Percentile(fds, 1),
              Median(sockets), Median(threads), master.rss_mib, master.fds, master.sockets,
              master.threads);
}

// The yardstick: `kRawTrips` one-byte round trips to a forked echo over
// loopback TCP; the CPU both processes spent per round trip, in µs.
StatusOr<double> MeasureRawRoundTrip(FiguresJson& json) {
  constexpr int kRawTrips = 20000;
  int port = 0;
  TFD_ASSIGN_OR_RETURN(int listen_fd, ListenLoopback(&port));
  auto echo = Subprocess::Fork([listen_fd] { return RunEchoPeer(listen_fd); }, BenchChild(-1));
  close(listen_fd);
  if (!echo.ok()) return echo.status();
  TFD_ASSIGN_OR_RETURN(int fd, ConnectLoopback(port));
  auto warm = PingPong(fd, 200);
  const pid_t pids[] = {getpid(), echo->pid()};
  std::vector<ProcCounters> before;
  for (pid_t pid : pids) before.push_back(ReadProcCounters(pid));
  auto timed = warm.ok() ? PingPong(fd, kRawTrips) : warm;
  double cpu = 0;
  for (size_t i = 0; i < 2; ++i) cpu += (ReadProcCounters(pids[i]) - before[i]).cpu_seconds;
  close(fd);  // the echo sees the end and exits
  if (!timed.ok()) return timed.status();
  const double cpu_us = cpu / kRawTrips * 1e6;
  json.Add("raw TCP round trip", "1 byte", "CPU", "us", cpu_us);
  json.Add("raw TCP round trip", "1 byte", "latency p50", "us", Median(*timed));
  std::printf("raw TCP round trip      one byte each way, both ends asleep between: p50 %.1f us, "
              "CPU %.1f us (both ends)\n",
              Median(*timed), cpu_us);
  return cpu_us;
}

// Fan-out steps: latency samples, and CPU of every process per step.
Status MeasureFanOut(Client& client, const ScaleCluster& cluster, const FanOutGraph& g, int steps,
                     double raw_round_trip_cpu_us, FiguresJson& json, const std::string& row) {
  for (int i = 0; i < kWarmSteps; ++i) {  // warm: registrations, connections, pools
    TFD_RETURN_IF_ERROR(client.Run({}, {}, g.noops, {.timeout = kTimeout}).status());
  }
  std::vector<pid_t> pids = cluster.Pids();
  pids.push_back(getpid());
  std::vector<ProcCounters> before;
  for (pid_t pid : pids) before.push_back(ReadProcCounters(pid));
  std::vector<double> millis;
  for (int i = 0; i < steps; ++i) {
    const auto start = Clock::now();
    TFD_RETURN_IF_ERROR(client.Run({}, {}, g.noops, {.timeout = kTimeout}).status());
    millis.push_back(Millis(Clock::now() - start));
  }
  double tasks_cpu = 0, client_cpu = 0;
  for (size_t i = 0; i < pids.size(); ++i) {
    const double cpu = (ReadProcCounters(pids[i]) - before[i]).cpu_seconds;
    (i + 1 == pids.size() ? client_cpu : tasks_cpu) += cpu;
  }
  const double remote = static_cast<double>(cluster.tasks().size() - 1);
  const double per_partition_us = (tasks_cpu + client_cpu) / steps / remote * 1e6;
  json.AddSamples("fan-out step", row, "latency", "ms", millis);
  json.Add("fan-out step", row, "latency p99", "ms", Percentile(millis, 0.99));
  json.Add("fan-out step", row, "CPU per remote partition", "us", per_partition_us);
  json.Add("fan-out step", row, "tasks' CPU per step", "ms", tasks_cpu / steps * 1e3);
  const double rounds = per_partition_us / raw_round_trip_cpu_us;
  json.Add("fan-out step", row, "CPU per remote partition / raw round trip", "x", rounds);
  std::printf("  fan-out step           p50 %.3f ms, p99 %.3f ms; CPU per step %.3f ms (tasks) + "
              "%.3f ms (client) = %.1f us per remote partition (%.2fx a raw round trip)\n",
              Median(millis), Percentile(millis, 0.99), tasks_cpu / steps * 1e3,
              client_cpu / steps * 1e3, per_partition_us, rounds);
  return OkStatus();
}

// The partitions every task has run for masters over the step channel so
// far (each one `run` message in and one `done` out), summed.
StatusOr<uint64_t> StepsServed(kj::AsyncIoContext& io, const ScaleCluster& cluster) {
  uint64_t served = 0;
  for (const auto& [job, task] : cluster.tasks()) {
    TFD_ASSIGN_OR_RETURN(const std::string address, cluster.ListenAddress(job, task));
    TFD_ASSIGN_OR_RETURN(auto client, Client::Connect(io, address, "", kTimeout));
    TFD_ASSIGN_OR_RETURN(const TaskStatusInfo status, client->GetStatus(kTimeout));
    served += status.data_plane.steps_served;
  }
  return served;
}

// waitCluster, the init barrier and session creation on a ready cluster.
Status MeasureControl(kj::AsyncIoContext& io, const std::string& master, const FanOutGraph& g,
                      FiguresJson& json, const std::string& row) {
  TFD_ASSIGN_OR_RETURN(auto client, Client::Connect(io, master, "", kTimeout));
  std::vector<double> wait_cluster, barrier, sessions;
  for (int i = 0; i < 5; ++i) {
    auto start = Clock::now();
    TFD_RETURN_IF_ERROR(client->WaitCluster(kTimeout).status());
    wait_cluster.push_back(Millis(Clock::now() - start));
    start = Clock::now();
    TFD_RETURN_IF_ERROR(client->WaitInitialized(g.variables, kTimeout));
    barrier.push_back(Millis(Clock::now() - start));
    start = Clock::now();
    TFD_RETURN_IF_ERROR(client->CreateSession(g.graph, kTimeout));
    sessions.push_back(Millis(Clock::now() - start));
  }
  json.AddSamples("control", row, "waitCluster", "ms", wait_cluster);
  json.AddSamples("control", row, "init barrier", "ms", barrier);
  json.AddSamples("control", row, "session creation", "ms", sessions);
  std::printf("  control                waitCluster %.2f ms, init barrier %.2f ms, session "
              "creation %.2f ms\n",
              Median(wait_cluster), Median(barrier), Median(sessions));
  return client->CloseSession();
}

// delay_us < 0: no proxy.
Status RunSize(const ScaleSetup& o, int n, int delay_us, FiguresJson& json) {
  const int ps = o.ps > 0 ? o.ps : std::max(1, n / 8);
  const std::string delay = delay_us < 0 ? "" : ", " + std::to_string(delay_us) + " us";
  const std::string row = std::to_string(n) + " tasks" + delay;
  std::printf("%d tasks (%d ps, %d workers)%s\n", n, ps, n - ps,
              delay_us < 0 ? "" : (delay + " one way between tasks").c_str());
  ScaleCluster cluster(o.tfctl, o.tfd, ps, n - ps);
  std::unique_ptr<DelayProxy> proxy;
  if (delay_us >= 0) {
    TFD_ASSIGN_OR_RETURN(proxy, RouteThroughProxy(cluster, delay_us));
  }
  const FanOutGraph g = MakeGraph(cluster);
  const auto t0 = Clock::now();
  TFD_RETURN_IF_ERROR(cluster.Start(kTimeout));
  const auto started = Clock::now();
  auto io = kj::setupAsyncIo();
  TFD_ASSIGN_OR_RETURN(const std::string master, cluster.ListenAddress("worker", 0));
  TFD_ASSIGN_OR_RETURN(auto client, Client::Connect(io, master, "", kTimeout));
  TFD_RETURN_IF_ERROR(client->WaitCluster(kTimeout).status());
  const auto ready = Clock::now();
  AddFootprints(json, cluster, "idle task", row);
  // Reading every task's /proc is the bench's own work (tens of ms at 64
  // tasks), done while the cluster idles: it is not part of the start.
  auto start = Clock::now();
  const Clock::duration reading = start - ready;
  TFD_RETURN_IF_ERROR(client->CreateSession(g.graph, kTimeout));
  const double session_ms = Millis(Clock::now() - start);
  TFD_RETURN_IF_ERROR(client->Run({}, {}, g.noops, {.timeout = kTimeout}).status());
  const auto first_step = Clock::now() - reading;
  json.Add("start", row, "tfctl start", "s", Millis(started - t0) / 1e3);
  json.Add("start", row, "every task ready", "s", Millis(ready - t0) / 1e3);
  json.Add("start", row, "first fan-out step done", "s", Millis(first_step - t0) / 1e3);
  json.Add("start", row, "first session creation", "ms", session_ms);
  std::printf("  start                  tfctl start %.3f s, ready %.3f s, first step done %.3f s"
              " (first session %.1f ms; reading /proc %.0f ms, not counted)\n",
              Millis(started - t0) / 1e3, Millis(ready - t0) / 1e3, Millis(first_step - t0) / 1e3,
              session_ms, Millis(reading));
  TFD_RETURN_IF_ERROR(client->Run({}, {}, g.inits, {.timeout = kTimeout}).status());
  TFD_RETURN_IF_ERROR(MeasureControl(io, master, g, json, row));
  TFD_ASSIGN_OR_RETURN(const uint64_t served_before, StepsServed(io, cluster));
  TFD_RETURN_IF_ERROR(
      MeasureFanOut(*client, cluster, g, o.steps, o.raw_round_trip_cpu_us, json, row));
  TFD_ASSIGN_OR_RETURN(const uint64_t served_after, StepsServed(io, cluster));
  // The warm-up's steps count too: kWarmSteps + o.steps fan-out steps ran.
  const double messages = static_cast<double>(served_after - served_before) / (kWarmSteps + o.steps);
  json.Add("fan-out step", row, "step messages and answers per step", "round trips", messages);
  std::printf("  fan-out step           %.2f step messages (each with its answer) per step, to %zu "
              "other tasks, sent at once\n",
              messages, cluster.tasks().size() - 1);
  AddFootprints(json, cluster, "after fan-out", row);
  if (proxy != nullptr) {
    TFD_RETURN_IF_ERROR(TraceFanOut(*client, g.noops, json, row));
  }
  TFD_RETURN_IF_ERROR(client->CloseSession());
  if (proxy != nullptr) {
    TFD_RETURN_IF_ERROR(MeasureWorkerStep(*client, o.steps, json, row));
    AddProxyCounters(*proxy, json, row);
  }
  client.reset();
  start = Clock::now();
  TFD_RETURN_IF_ERROR(cluster.Stop(kTimeout));
  json.Add("stop", row, "tfctl stop", "s", Millis(Clock::now() - start) / 1e3);
  std::printf("  stop                   tfctl stop %.3f s\n", Millis(Clock::now() - start) / 1e3);
  return OkStatus();
}

Status RunAsync(const ScaleSetup& o, FiguresJson& json) {
  const int most = *std::max_element(o.async_workers.begin(), o.async_workers.end());
  std::printf("async steps on 1 ps and up to %d workers\n", most);
  ScaleCluster cluster(o.tfctl, o.tfd, 1, most);
  TFD_RETURN_IF_ERROR(cluster.Start(kTimeout));
  TFD_RETURN_IF_ERROR(MeasureAsync(cluster, o.async_workers, o.async_seconds, 1.0, json));
  return cluster.Stop(kTimeout);
}

}  // namespace
}  // namespace tfd::bench

int main(int argc, char** argv) {
  using namespace tfd::bench;
  ScaleSetup setup;
  ParseFlags(argc, argv, setup);
  FiguresJson json("scale_bench", argc, argv);
  std::printf("scale_bench: %s, %ld CPUs\n", ProcLine("/proc/cpuinfo", "model name").c_str(),
              sysconf(_SC_NPROCESSORS_ONLN));
  const std::vector<int> delays = setup.delays_us.empty() ? std::vector<int>{-1} : setup.delays_us;
  if (!setup.sizes.empty()) {
    auto raw = MeasureRawRoundTrip(json);
    if (!raw.ok()) {
      std::fprintf(stderr, "scale_bench: error: raw round trip: %s\n",
                   raw.status().ToString().c_str());
      return 1;
    }
    setup.raw_round_trip_cpu_us = *raw;
  }
  for (int n : setup.sizes) {
    for (int delay_us : delays) {
      if (tfd::Status s = RunSize(setup, n, delay_us, json); !s.ok()) {
        std::fprintf(stderr, "scale_bench: error: %d tasks: %s\n", n, s.ToString().c_str());
        return 1;
      }
    }
  }
  if (!setup.async_workers.empty() && setup.delays_us.empty()) {
    if (tfd::Status s = RunAsync(setup, json); !s.ok()) {
      std::fprintf(stderr, "scale_bench: error: async steps: %s\n", s.ToString().c_str());
      return 1;
    }
  }
  if (!setup.sync_workers.empty()) {
    if (tfd::Status s = MeasureSync(setup.tfctl, setup.tfd, setup.sync_workers,
                                    setup.async_seconds, json);
        !s.ok()) {
      std::fprintf(stderr, "scale_bench: error: sync replicas: %s\n", s.ToString().c_str());
      return 1;
    }
  }
  if (tfd::Status s = json.Write(setup.json_path); !s.ok()) {
    std::fprintf(stderr, "scale_bench: error: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
