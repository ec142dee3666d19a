#include "daemon/runtime/local_session.h"

#include <set>

#include "common/device_name.h"
#include "common/graph.h"
#include "common/prune.h"
#include "daemon/runtime/device_copies.h"
#include "daemon/runtime/gpu_placement.h"
#include "daemon/runtime/run_rewrite.h"
#include "kernels/gpu/gpu_device.h"

namespace tfd {
namespace {

std::string SignatureKey(const LocalSession::Feeds& feeds, const std::vector<std::string>& fetches,
                         const std::vector<std::string>& targets) {
  std::string key;
  for (const auto& [name, t] : feeds) key += name + ",";
  key += ";";
  for (const auto& f : fetches) key += f + ",";
  key += ";";
  for (const auto& t : targets) key += t + ",";
  return key;
}

}  // namespace

struct LocalSession::Prepared {
  std::vector<FeedSpec> feeds;
  std::unique_ptr<Executor> executor;
};

LocalSession::LocalSession(const OpRegistry& registry, const KernelEnv& env,
                           boost::asio::thread_pool& pool, Options options)
    : registry_(registry), env_(env), pool_(pool), options_(options) {}

LocalSession::~LocalSession() = default;

Status LocalSession::Create(GraphDef graph) {
  TFD_RETURN_IF_ERROR(CheckGraphVersions(graph.versions));
  MutexLock lock(mu_);
  graph_ = std::move(graph);
  prepared_.clear();
  return OkStatus();
}

Status LocalSession::Extend(const GraphDef& more) {
  TFD_RETURN_IF_ERROR(CheckGraphVersions(more.versions));
  MutexLock lock(mu_);
  std::set<std::string> names;
  for (const NodeDef& n : graph_.nodes) names.insert(n.name);
  for (const NodeDef& n : more.nodes) {
    if (names.count(n.name)) {
      return errors::AlreadyExists("node '", n.name, "' is already in the session's graph");
    }
  }
  for (const NodeDef& n : more.nodes) graph_.nodes.push_back(n);
  graph_.versions = CombineGraphVersions(graph_.versions, more.versions);
  prepared_.clear();
  return OkStatus();
}

StatusOr<std::shared_ptr<LocalSession::Prepared>> LocalSession::Prepare(
    const Feeds& feeds, const std::vector<std::string>& fetches,
    const std::vector<std::string>& targets) {
  const std::string key = SignatureKey(feeds, fetches, targets);
  MutexLock lock(mu_);
  if (auto it = prepared_.find(key); it != prepared_.end()) return it->second;

  std::vector<std::pair<TensorId, Tensor>> feed_ids;
  for (const auto& [name, t] : feeds) {
    TFD_ASSIGN_OR_RETURN(TensorId id, ParseTensorId(name));
    feed_ids.emplace_back(std::move(id), t);
  }
  std::vector<TensorId> fetch_ids;
  for (const std::string& f : fetches) {
    TFD_ASSIGN_OR_RETURN(TensorId id, ParseTensorId(f));
    fetch_ids.push_back(std::move(id));
  }
  auto prepared = std::make_shared<Prepared>();
  TFD_ASSIGN_OR_RETURN(GraphDef rewritten,
                       RewriteForRun(graph_, registry_, feed_ids, fetch_ids, targets, &prepared->feeds));
  // One process: job and task requests are moot (said once); GPU requests
  // go to this process's GPUs where they can.
  bool warned_task = false, wants_gpu = false;
  std::vector<DeviceName> requested;
  for (const NodeDef& n : rewritten.nodes) {
    auto d = DeviceName::Parse(n.device);
    if (!d.ok()) return d.status().WithContext("node '" + n.name + "' (" + n.op + ")");
    if ((d->job || d->task) && !warned_task && env_.logger) {
      env_.logger->info("in-process run: node '{}' asks for {}; every node runs in this process",
                        n.name, d->TaskName());
      warned_task = true;
    }
    wants_gpu = wants_gpu || d->type == std::string(kDeviceGpu);
    requested.push_back(*d);
  }
  if (wants_gpu) {
    TFD_ASSIGN_OR_RETURN(rewritten, PlaceOnThisProcessGpus(std::move(rewritten), requested));
  }
  TFD_ASSIGN_OR_RETURN(Graph g, Graph::Build(std::move(rewritten), registry_));
  Executor::Options eo{&registry_, &env_, &pool_, kDeviceCpu, env_.task + "/device:CPU:0"};
  eo.inline_kernels = options_.inline_kernels;
  TFD_ASSIGN_OR_RETURN(prepared->executor,
                       Executor::Create(std::make_shared<const Graph>(std::move(g)), eo));
  prepared_.emplace(key, prepared);
  return prepared;
}

StatusOr<GraphDef> LocalSession::PlaceOnThisProcessGpus(GraphDef rewritten,
                                                        const std::vector<DeviceName>& requested) {
  TFD_ASSIGN_OR_RETURN(Graph placed, Graph::Build(std::move(rewritten), registry_));
  const int gpus = static_cast<int>(env_.gpus.size());
  // Resources are placed by the whole graph, not this step's part of it:
  // a variable lands on the same device in every step.
  std::map<std::string, std::string> whole_blockers;
  if (gpus > 0) {
    TFD_ASSIGN_OR_RETURN(Graph whole, Graph::Build(graph_, registry_));
    whole_blockers = GpuBlockers(whole);
  }
  GpuPlacementOptions gpu_options{.gpus = [gpus](int) { return gpus; },
                                  .unavailable = gpu::GpuUnavailableReason(),
                                  .allow_soft_placement = options_.allow_soft_placement,
                                  .logger = env_.logger,
                                  .whole_graph_blockers = &whole_blockers};
  TFD_ASSIGN_OR_RETURN(std::vector<int> on_gpu, PlaceOnGpus(placed, requested, gpu_options));
  GraphDef with_devices = placed.ToGraphDef();
  bool any_gpu = false;
  for (size_t id = 0; id < on_gpu.size(); ++id) {
    NodeDef& n = with_devices.nodes[id];
    if (on_gpu[id] >= 0) {
      n.device = env_.task + "/device:GPU:" + std::to_string(on_gpu[id]);
      any_gpu = true;
    } else if (requested[id].type == std::string(kDeviceGpu)) {
      n.device = env_.task + "/device:CPU:0";  // soft-placed
    }
  }
  if (!any_gpu) return with_devices;
  TFD_ASSIGN_OR_RETURN(Graph g, Graph::Build(std::move(with_devices), registry_));
  return InsertDeviceCopies(g);
}

StatusOr<LocalSession::RunOutput> LocalSession::Run(const Feeds& feeds,
                                                    const std::vector<std::string>& fetches,
                                                    const std::vector<std::string>& targets,
                                                    const RunOptions& options) {
  TFD_ASSIGN_OR_RETURN(auto prepared, Prepare(feeds, fetches, targets));
  CallFrame frame;
  for (size_t i = 0; i < feeds.size(); ++i) {
    TFD_RETURN_IF_ERROR(CheckFeed(prepared->feeds[i], feeds[i].second));
    frame.args.push_back(feeds[i].second);
  }
  frame.retvals.resize(fetches.size());
  CancellationManager cancellation;
  int64_t step_id;
  {
    MutexLock lock(mu_);
    if (closed_) return errors::FailedPrecondition("this session is closed");
    step_id = next_step_id_++;
    running_[step_id] = &cancellation;
  }
  struct Deregister {
    LocalSession& session;
    int64_t step_id;
    ~Deregister() {
      MutexLock lock(session.mu_);
      session.running_.erase(step_id);
    }
  } deregister{*this, step_id};
  const auto deadline = options.deadline.count() > 0 ? options.deadline : options_.default_deadline;
  Executor::RunArgs args;
  args.step_id = step_id;
  args.frame = &frame;
  args.cancellation = &cancellation;
  args.deadline = std::chrono::steady_clock::now() + deadline;
  args.trace = options.trace;
  args.interrupted = options.interrupted;
  RunOutput out;
  TFD_RETURN_IF_ERROR(prepared->executor->Run(args, &out.stats));
  out.fetches = std::move(frame.retvals);
  return out;
}

void LocalSession::Close() {
  MutexLock lock(mu_);
  closed_ = true;
  // Under the lock, so that no Run removes its manager meanwhile: a
  // cancellation's callbacks only wake the step's waits, none of which
  // takes this lock.
  for (const auto& [step_id, cancellation] : running_) {
    cancellation->Cancel(
        errors::Cancelled("the session was closed while step ", step_id, " was running"));
  }
}

}  // namespace tfd
