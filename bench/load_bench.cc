// load_bench: tfd under load (issue 14's figures). A cluster of ps:0 and
// worker:0 serves `--clients` client threads at once, each with its own
// connection and session running a small graph over both tasks (y = v * x,
// v on the ps) for `--seconds`; then one client opens, runs once and closes
// `--sessions` sessions in a row. Prints throughput, latency percentiles,
// errors (with the first few messages), each daemon's RSS at the start and
// end, and what the tasks still hold after the churn (sessions and
// registered partitions, which must be back to none).
//
//   load_bench [--tfd PATH] [--clients 64] [--seconds 60] [--sessions 2000] [--json FILE]
//
// Exit status: 0 after printing (errors are reported, and make it 1); 2 for
// bad flags.
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_flags.h"
#include "bench/figures_json.h"
#include "bench/proc_counters.h"
#include "bench/stats.h"
#include "bench/tfd_cluster.h"
#include "common/mutex.h"

#ifndef TFD_DEFAULT_PATH
#define TFD_DEFAULT_PATH "tfd"
#endif

namespace tfd::bench {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr std::chrono::milliseconds kTimeout = 30s;

struct LoadSetup {
  std::string tfd;
  int clients = 64;
  int seconds = 60;
  int sessions = 2000;
  std::string json_path;  // --json: also write the figures there
};

// The command line into `o`; exits on --help or a bad flag.
void ParseFlags(int argc, char** argv, LoadSetup& o) {
  BenchFlags flags("load_bench", "many clients at once on ps:0 + worker:0, then sessions opened "
                                 "and closed in a row");
  flags.TfdBinary(TFD_DEFAULT_PATH, &o.tfd)
      .Int("clients", 1, 512, "client threads running steps at once", &o.clients)
      .Int("seconds", 1, 3600, "how long they run", &o.seconds)
      .Int("sessions", 0, 1000000, "sessions opened, run once and closed in a row afterwards",
           &o.sessions)
      .Json(&o.json_path);
  flags.ParseOrExit(argc, argv);
}

NodeDef Node(std::string name, std::string op, std::vector<std::string> inputs, std::string device,
             AttrMap attrs = {}) {
  return NodeDef{std::move(name), std::move(op), std::move(inputs), std::move(device),
                 std::move(attrs)};
}

// y = v * x with v (3.0) on the ps: every step crosses tasks both ways.
GraphDef SmallGraph() {
  GraphDef g;
  g.nodes = {
      Node("v", "VariableV2", {}, "/job:ps",
           {{"dtype", DType::kFloat32}, {"shape", PartialShape(std::vector<int64_t>{})}}),
      Node("three", "Const", {}, "/job:ps",
           {{"value", Tensor::Scalar(3.0f)}, {"dtype", DType::kFloat32}}),
      Node("init", "Assign", {"v", "three"}, "/job:ps"),
      Node("x", "Placeholder", {}, "/job:worker", {{"dtype", DType::kFloat32}}),
      Node("y", "Mul", {"v", "x"}, "/job:worker")};
  return g;
}

// What went wrong, counted, with the first few messages kept.
class Errors {
 public:
  void Add(const Status& s) {
    MutexLock lock(mu_);
    ++count_;
    if (first_.size() < 5) first_.push_back(s.ToString());
  }
  size_t count() const {
    MutexLock lock(mu_);
    return count_;
  }
  void Print(const char* what) const {
    MutexLock lock(mu_);
    std::printf("  %s errors: %zu%s\n", what, count_, count_ == 0 ? "" : " (first ones below)");
    for (const std::string& m : first_) std::printf("    %s\n", m.c_str());
  }

 private:
  mutable Mutex mu_;
  size_t count_ GUARDED_BY(mu_) = 0;
  std::vector<std::string> first_ GUARDED_BY(mu_);
};

// One client thread: connects, opens a session, runs until `until`.
void Client(BenchCluster& cluster, Clock::time_point until, int index, Errors& errors,
            std::vector<double>& micros) {
  Status s = [&]() -> Status {
    auto io = kj::setupAsyncIo();
    TFD_ASSIGN_OR_RETURN(auto client, cluster.Connect(io, "worker", 0));
    TFD_RETURN_IF_ERROR(client->CreateSession(SmallGraph(), kTimeout));
    const float x = static_cast<float>(index);
    while (Clock::now() < until) {
      const auto start = Clock::now();
      auto out = client->Run({{"x", Tensor::Scalar(x)}}, {"y"}, {}, {.timeout = kTimeout});
      if (!out.ok()) {
        errors.Add(out.status());
        continue;
      }
      micros.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
      if (out->fetches.size() != 1 || out->fetches[0].scalar<float>() != 3.0f * x) {
        errors.Add(errors::Internal("client ", index, " got a wrong y"));
      }
    }
    return client->CloseSession();
  }();
  if (!s.ok()) errors.Add(s.WithContext("client " + std::to_string(index)));
}

double MiB(size_t bytes) { return static_cast<double>(bytes) / 1048576.0; }

int Run(const LoadSetup& o, FiguresJson& json) {
  auto io = kj::setupAsyncIo();
  BenchCluster cluster(o.tfd, {{"ps", {-1}}, {"worker", {-1}}});
  if (Status s = cluster.Start(io); !s.ok()) {
    std::fprintf(stderr, "load_bench: error: %s\n", s.ToString().c_str());
    return 1;
  }
  auto setup = cluster.Connect(io, "worker", 0);
  Status init = setup.ok() ? (*setup)->CreateSession(SmallGraph(), kTimeout) : setup.status();
  if (init.ok()) init = (*setup)->Run({}, {}, {"init"}, {.timeout = kTimeout}).status();
  if (init.ok()) init = (*setup)->CloseSession();
  if (!init.ok()) {
    std::fprintf(stderr, "load_bench: error: %s\n", init.ToString().c_str());
    return 1;
  }
  const pid_t ps = cluster.Pid("ps", 0), worker = cluster.Pid("worker", 0);
  const size_t ps_start = RssBytes(ps), worker_start = RssBytes(worker);

  Errors load_errors;
  std::vector<std::vector<double>> micros(static_cast<size_t>(o.clients));
  const auto start = Clock::now();
  const auto until = start + std::chrono::seconds(o.seconds);
  size_t ps_half = 0, worker_half = 0;
  {
    std::vector<std::thread> threads;
    for (int i = 0; i < o.clients; ++i) {
      threads.emplace_back(Client, std::ref(cluster), until, i, std::ref(load_errors),
                           std::ref(micros[static_cast<size_t>(i)]));
    }
    // Half-way, every client is connected and warm: from here to the end the
    // daemons' memory should not move (the load is steady, not growing).
    std::this_thread::sleep_until(start + std::chrono::milliseconds(o.seconds * 500));
    ps_half = RssBytes(ps);
    worker_half = RssBytes(worker);
    for (auto& t : threads) t.join();
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  std::vector<double> all;
  for (const auto& m : micros) all.insert(all.end(), m.begin(), m.end());
  const size_t ps_loaded = RssBytes(ps), worker_loaded = RssBytes(worker);

  Errors churn_errors;
  const auto churn_start = Clock::now();
  for (int i = 0; i < o.sessions; ++i) {
    Status s = (*setup)->CreateSession(SmallGraph(), kTimeout);
    if (s.ok()) s = (*setup)->Run({{"x", Tensor::Scalar(1.0f)}}, {"y"}, {}, {}).status();
    if (s.ok()) s = (*setup)->CloseSession();
    if (!s.ok()) churn_errors.Add(s.WithContext("session " + std::to_string(i)));
  }
  const double churn_seconds = std::chrono::duration<double>(Clock::now() - churn_start).count();
  auto worker_status = (*setup)->GetStatus(kTimeout);
  auto ps_client = cluster.Connect(io, "ps", 0);
  StatusOr<TaskStatusInfo> ps_status =
      ps_client.ok() ? (*ps_client)->GetStatus(kTimeout) : ps_client.status();

  std::printf("load_bench: %d clients for %d s on ps:0 + worker:0 (unpinned); tfd: %s\n",
              o.clients, o.seconds, o.tfd.c_str());
  std::printf("  steps: %zu in %.1f s, %.0f steps/s; latency p50 %.0f µs, p99 %.0f µs, max %.0f µs\n",
              all.size(), elapsed, all.size() / elapsed, Percentile(all, 0.5),
              Percentile(all, 0.99), Percentile(all, 1.0));
  load_errors.Print("load");
  std::printf("  sessions: %d opened, run once and closed in %.1f s (%.0f per second)\n",
              o.sessions, churn_seconds, churn_seconds > 0 ? o.sessions / churn_seconds : 0.0);
  churn_errors.Print("session");
  if (worker_status.ok() && ps_status.ok()) {
    std::printf("  after: worker:0 holds %u sessions and %u registered partitions, ps:0 %u "
                "registered partitions (all should be 0)\n",
                worker_status->sessions, worker_status->registered_graphs,
                ps_status->registered_graphs);
  }
  std::printf("  RSS MiB (idle / half-way through the load / its end / after the sessions): "
              "ps:0 %.1f / %.1f / %.1f / %.1f, worker:0 %.1f / %.1f / %.1f / %.1f\n",
              MiB(ps_start), MiB(ps_half), MiB(ps_loaded), MiB(RssBytes(ps)), MiB(worker_start),
              MiB(worker_half), MiB(worker_loaded), MiB(RssBytes(worker)));
  std::fflush(stdout);
  const std::string clients = std::to_string(o.clients) + " clients";
  json.Add("throughput", clients, "tfd", "steps/s", all.size() / elapsed);
  json.Add("throughput", "sessions opened, run once, closed", "tfd", "per s",
           churn_seconds > 0 ? o.sessions / churn_seconds : 0.0);
  for (double q : {0.5, 0.99, 1.0}) {
    json.Add("step latency", q == 1.0 ? "max" : q == 0.5 ? "p50" : "p99", clients, "us",
             Percentile(all, q));
  }
  json.Add("errors", "steps and sessions", "tfd", "count",
           static_cast<double>(load_errors.count() + churn_errors.count()));
  const std::pair<const char*, std::array<size_t, 4>> rss[] = {
      {"ps:0", {ps_start, ps_half, ps_loaded, RssBytes(ps)}},
      {"worker:0", {worker_start, worker_half, worker_loaded, RssBytes(worker)}}};
  for (const auto& [task, at] : rss) {
    const char* when[] = {"idle", "half-way", "end of the load", "after the sessions"};
    for (size_t i = 0; i < at.size(); ++i) json.Add("RSS", when[i], task, "MiB", MiB(at[i]));
  }
  // The clients disconnect before the daemons are told to stop.
  ps_client = errors::Cancelled("done");
  setup = errors::Cancelled("done");
  Status stopped = cluster.Stop();
  if (!stopped.ok()) std::fprintf(stderr, "load_bench: stopping: %s\n", stopped.ToString().c_str());
  if (Status s = json.Write(o.json_path); !s.ok()) {
    std::fprintf(stderr, "load_bench: error: %s\n", s.ToString().c_str());
    return 1;
  }
  return load_errors.count() + churn_errors.count() == 0 && stopped.ok() ? 0 : 1;
}

int Main(int argc, char** argv) {
  LoadSetup options;
  ParseFlags(argc, argv, options);
  FiguresJson json("load_bench", argc, argv);
  return Run(options, json);
}

}  // namespace
}  // namespace tfd::bench

int main(int argc, char** argv) { return tfd::bench::Main(argc, argv); }
