#include "bench/scale_delay.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "bench/stats.h"

namespace tfd::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kTimeout{60000};
constexpr int kWarmSteps = 20;
constexpr const char* kMaster = "/job:worker/replica:0/task:0/";

// The traces' clock: wall-clock microseconds since the Unix epoch, as
// every task on this host reads it.
int64_t WallMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// v on ps 0, one on worker 0, and inc: v += one on ps 0.
GraphDef WorkerStepGraph() {
  GraphDef g;
  const std::string ps = "/job:ps/task:0", worker = "/job:worker/task:0";
  g.nodes.push_back({"step_v", "VariableV2", {}, ps,
                     {{"dtype", DType::kFloat32}, {"shape", PartialShape(std::vector<int64_t>{})}}});
  g.nodes.push_back({"step_zero", "Const", {}, ps,
                     {{"value", Tensor::Scalar(0.0f)}, {"dtype", DType::kFloat32}}});
  g.nodes.push_back({"step_init", "Assign", {"step_v", "step_zero"}, ps, {}});
  g.nodes.push_back({"step_one", "Const", {}, worker,
                     {{"value", Tensor::Scalar(1.0f)}, {"dtype", DType::kFloat32}}});
  g.nodes.push_back({"step_inc", "AssignAdd", {"step_v", "step_one"}, ps, {}});
  return g;
}

}  // namespace

Status TraceFanOut(Client& client, const std::vector<std::string>& noops, FiguresJson& json,
                   const std::string& row) {
  constexpr int kTraced = 10;
  std::vector<double> first, last, ended;
  for (int i = 0; i < kTraced; ++i) {
    const int64_t called = WallMicros();
    TFD_ASSIGN_OR_RETURN(auto out, client.Run({}, {}, noops, {.timeout = kTimeout, .trace = true}));
    ended.push_back(static_cast<double>(WallMicros() - called) / 1e3);
    std::vector<double> starts;
    for (const NodeExecStats& n : out.stats.nodes) {
      if (n.device.rfind(kMaster, 0) == 0) continue;
      starts.push_back(static_cast<double>(n.start_micros - called) / 1e3);
    }
    if (starts.empty()) return errors::Internal("a traced fan-out step traced no remote partition");
    first.push_back(*std::min_element(starts.begin(), starts.end()));
    last.push_back(*std::max_element(starts.begin(), starts.end()));
  }
  json.AddSamples("fan-out trace", row, "first remote partition starts", "ms", first);
  json.AddSamples("fan-out trace", row, "last remote partition starts", "ms", last);
  json.AddSamples("fan-out trace", row, "step ends", "ms", ended);
  std::printf("  fan-out trace          the other tasks' partitions start %.2f to %.2f ms after "
              "the call, the step ends at %.2f ms (medians of %d traced steps)\n",
              Median(first), Median(last), Median(ended), kTraced);
  return OkStatus();
}

StatusOr<std::unique_ptr<DelayProxy>> RouteThroughProxy(ScaleCluster& cluster, int delay_us) {
  TFD_ASSIGN_OR_RETURN(auto proxy, DelayProxy::Start(std::chrono::microseconds(delay_us)));
  TFD_RETURN_IF_ERROR(cluster.RouteThrough(*proxy));
  return proxy;
}

Status MeasureWorkerStep(Client& client, int steps, FiguresJson& json, const std::string& row) {
  TFD_RETURN_IF_ERROR(client.CreateSession(WorkerStepGraph(), kTimeout));
  TFD_RETURN_IF_ERROR(client.Run({}, {}, {"step_init"}, {.timeout = kTimeout}).status());
  const std::vector<std::string> targets{"step_inc"};
  for (int i = 0; i < kWarmSteps; ++i) {
    TFD_RETURN_IF_ERROR(client.Run({}, {}, targets, {.timeout = kTimeout}).status());
  }
  std::vector<double> millis;
  for (int i = 0; i < steps; ++i) {
    const auto start = Clock::now();
    TFD_RETURN_IF_ERROR(client.Run({}, {}, targets, {.timeout = kTimeout}).status());
    millis.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  json.AddSamples("async worker step", row, "latency", "ms", millis);
  json.Add("async worker step", row, "latency p99", "ms", Percentile(millis, 0.99));
  std::printf("  async worker step      p50 %.3f ms, p99 %.3f ms (worker 0 adds a value to a "
              "variable on ps 0)\n",
              Median(millis), Percentile(millis, 0.99));
  return client.CloseSession();
}

void AddProxyCounters(const DelayProxy& proxy, FiguresJson& json, const std::string& row) {
  const DelayProxy::Counters c = proxy.counters();
  json.Add("delay proxy", row, "connections", "connections", static_cast<double>(c.connections));
  json.Add("delay proxy", row, "bytes relayed", "MiB", static_cast<double>(c.bytes) / (1 << 20));
  std::printf("  delay proxy            %lld us one way; %llu connections accepted, %.1f MiB "
              "relayed; %s\n",
              static_cast<long long>(proxy.delay().count()),
              static_cast<unsigned long long>(c.connections),
              static_cast<double>(c.bytes) / (1 << 20),
              c.realtime ? "real-time thread" : "normal priority (no right to SCHED_FIFO)");
}

}  // namespace tfd::bench
