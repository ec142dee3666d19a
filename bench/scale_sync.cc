#include "bench/scale_sync.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <future>
#include <limits>
#include <string>
#include <thread>

#include "api/ops.h"
#include "api/optimizers.h"
#include "api/placement.h"
#include "api/sync_replicas.h"
#include "api/train_signature.h"
#include "api/variables.h"
#include "bench/scale_cluster.h"
#include "bench/stats.h"
#include "daemon/client/client.h"
#include "kernels/register_all.h"

namespace tfd::bench {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
namespace sig = train::signature;

// A round waits for every worker; on a full host that can take long.
constexpr std::chrono::milliseconds kStepTimeout = 30s;
constexpr std::chrono::milliseconds kTimeout = 60s;
constexpr int64_t kNever = std::numeric_limits<int64_t>::min();

StatusOr<GraphDef> SyncGraph(int workers) {
  OpRegistry registry;
  TFD_RETURN_IF_ERROR(kernels::RegisterAll(registry));
  const Scope root = Scope::NewRootScope(registry).WithDeviceFunction(
      train::ReplicaDeviceSetter({.ps_tasks = 1, .worker_device = "/job:worker"}));
  const ops::Variable global_step = ops::GlobalStep(root);
  const ops::Variable w1(root.WithOpName("w1"), {784, 100}, DType::kFloat32,
                         ops::Initializer::Zeros());
  const ops::Variable b1(root.WithOpName("b1"), {100}, DType::kFloat32, ops::Initializer::Zeros());
  const ops::Variable w2(root.WithOpName("w2"), {100, 10}, DType::kFloat32,
                         ops::Initializer::Zeros());
  const ops::Variable b2(root.WithOpName("b2"), {10}, DType::kFloat32, ops::Initializer::Zeros());
  const Output loss = ops::AddN(root.WithOpName("loss"),
                                {ops::Sum(root, ops::Square(root, w1), {0, 1}),
                                 ops::Sum(root, ops::Square(root, b1), {0}),
                                 ops::Sum(root, ops::Square(root, w2), {0, 1}),
                                 ops::Sum(root, ops::Square(root, b2), {0})});
  const train::GradientDescent descent(0.001);
  train::SyncReplicas sync(descent, {.replicas_to_aggregate = workers, .total_replicas = workers});
  sync.Minimize(root.WithOpName(sig::kTrain), loss, global_step);
  ops::GlobalVariablesInitializer(root.WithOpName(sig::kInit));
  TFD_RETURN_IF_ERROR(root.status());
  return root.ToGraphDef();
}

// What one traced step says, in microseconds of the host's wall clock.
struct StepMarks {
  int64_t pushed = kNever;     // this worker's gradient fully pushed
  int64_t applied = kNever;    // the chief's: its last apply node ended
  int64_t advanced = kNever;   // the chief's: the sync round advanced
};

StepMarks Marks(const StepStats& stats) {
  StepMarks m;
  for (const NodeExecStats& n : stats.nodes) {
    if (n.op == "AccumulatorApplyGradient") m.pushed = std::max(m.pushed, n.end_micros);
    if (n.node.rfind("sync/apply", 0) == 0) m.applied = std::max(m.applied, n.end_micros);
    if (n.node == "sync/hand_out") m.advanced = std::max(m.advanced, n.end_micros);
  }
  return m;
}

struct WorkerTrace {
  std::vector<StepMarks> steps;
  std::vector<Clock::time_point> ends;
  Status status;
};

// The chief (worker 0) steps until `done`. It initializes first and says so
// through `initialized`, which the others wait for (their steps would fail
// on uninitialized variables). The others step until `chief_finished`: the
// chief's last round needs their gradients. The chief sets it, then releases
// the replicas waiting in the sync round, so each ends its last step.
void TrainLoop(const ScaleCluster& cluster, const GraphDef& graph, int w,
               const std::atomic<bool>& done, std::atomic<bool>& chief_finished,
               std::promise<Status>* initialized,
               std::shared_future<Status> chief_ready, WorkerTrace& out) {
  auto io = kj::setupAsyncIo();
  auto address = cluster.spec().TaskAddress("worker", w);
  if (!address.ok()) {
    out.status = address.status();
    return;
  }
  auto client = Client::Connect(io, *address, "", kTimeout);
  if (!client.ok()) {
    out.status = client.status();
    return;
  }
  out.status = (*client)->CreateSession(graph, kStepTimeout);
  const bool chief = w == 0;
  if (chief) {
    if (out.status.ok()) out.status = (*client)->Run({}, {}, {sig::kInit}, {}).status();
    if (out.status.ok()) out.status = (*client)->Run({}, {}, {sig::kChiefInit}, {}).status();
    initialized->set_value(out.status);
  } else if (out.status.ok()) {
    out.status = chief_ready.wait_for(kTimeout) == std::future_status::ready
                     ? chief_ready.get()
                     : errors::DeadlineExceeded("the chief did not initialize the variables within ",
                                                kTimeout.count(), " ms");
  }
  const std::vector<std::string> targets{chief ? sig::kChiefStep : sig::kTrain};
  const std::atomic<bool>& until = chief ? done : chief_finished;
  while (out.status.ok() && !until.load()) {
    auto step = (*client)->Run({}, {}, targets, {.trace = true});
    if (!step.ok()) {
      out.status = step.status();
      break;
    }
    out.steps.push_back(Marks(step->stats));
    out.ends.push_back(Clock::now());
  }
  if (chief) {
    chief_finished = true;
    const Status released = (*client)->Run({}, {}, {sig::kRelease}, {}).status();
    if (out.status.ok()) out.status = released;
  }
}

// Per round of the chief's steps ended in [from, to): from the round's last
// gradient to the update applied, and to the sync round advanced (ms).
struct Rounds {
  std::vector<double> applied, advanced;
};

Rounds RoundsOf(const std::vector<WorkerTrace>& traces, Clock::time_point from,
                Clock::time_point to) {
  const WorkerTrace& chief = traces[0];
  Rounds r;
  for (size_t k = 1; k < chief.steps.size(); ++k) {
    if (chief.ends[k] < from || chief.ends[k] >= to) continue;
    const int64_t begin = chief.steps[k - 1].advanced, end = chief.steps[k].advanced;
    int64_t last = kNever;
    for (const WorkerTrace& t : traces) {
      for (const StepMarks& s : t.steps) {
        if (s.pushed > begin && s.pushed <= end) last = std::max(last, s.pushed);
      }
    }
    if (last == kNever || chief.steps[k].applied == kNever) continue;
    r.applied.push_back(static_cast<double>(chief.steps[k].applied - last) / 1e3);
    r.advanced.push_back(static_cast<double>(end - last) / 1e3);
  }
  return r;
}

Status MeasureCount(const std::string& tfctl, const std::string& tfd, int n, double seconds,
                    FiguresJson& json) {
  TFD_ASSIGN_OR_RETURN(const GraphDef graph, SyncGraph(n));
  ScaleCluster cluster(tfctl, tfd, 1, n);
  TFD_RETURN_IF_ERROR(cluster.Start(kTimeout));
  std::vector<WorkerTrace> traces(static_cast<size_t>(n));
  std::atomic<bool> done{false}, chief_finished{false};
  std::promise<Status> initialized;
  const std::shared_future<Status> chief_ready = initialized.get_future().share();
  std::vector<std::thread> threads;
  for (int w = 0; w < n; ++w) {
    threads.emplace_back(TrainLoop, std::cref(cluster), std::cref(graph), w, std::cref(done),
                         std::ref(chief_finished), &initialized, chief_ready, std::ref(traces[static_cast<size_t>(w)]));
  }
  const auto from = Clock::now() + 1s;  // sessions made, the first rounds past
  const auto to = from + std::chrono::duration_cast<Clock::duration>(
                             std::chrono::duration<double>(seconds));
  std::this_thread::sleep_until(to);
  done = true;
  for (auto& t : threads) t.join();
  for (int w = 0; w < n; ++w) {
    const Status& s = traces[static_cast<size_t>(w)].status;
    if (!s.ok()) return s.WithContext("sync worker " + std::to_string(w));
  }
  TFD_RETURN_IF_ERROR(cluster.Stop(kTimeout));
  const Rounds r = RoundsOf(traces, from, to);
  if (r.advanced.empty()) {
    return errors::Internal("sync, ", n, " workers: no round ended in the ", seconds,
                            " s window whose traces name its gradients' pushes");
  }
  const std::string row = std::to_string(n) + " workers";
  const double rate = static_cast<double>(r.advanced.size()) / seconds;
  json.AddSamples("sync update", row, "last gradient to round advanced", "ms", r.advanced);
  json.Add("sync update", row, "last gradient to round advanced p99", "ms",
           Percentile(r.advanced, 0.99));
  json.AddSamples("sync update", row, "last gradient to update applied", "ms", r.applied);
  json.Add("sync update", row, "global steps/s", "steps/s", rate);
  std::printf("  sync, %2d workers       %.1f global steps/s (period %.2f ms); last gradient to "
              "update applied p50 %.3f ms, to round advanced p50 %.3f ms, p99 %.3f ms "
              "(%zu rounds)\n",
              n, rate, 1e3 / rate, Median(r.applied), Median(r.advanced),
              Percentile(r.advanced, 0.99), r.advanced.size());
  return OkStatus();
}

}  // namespace

Status MeasureSync(const std::string& tfctl, const std::string& tfd,
                   const std::vector<int>& worker_counts, double seconds, FiguresJson& json) {
  std::printf("sync replicas on 1 ps, every worker's gradient aggregated\n");
  for (int n : worker_counts) {
    TFD_RETURN_IF_ERROR(MeasureCount(tfctl, tfd, n, seconds, json));
  }
  return OkStatus();
}

}  // namespace tfd::bench
