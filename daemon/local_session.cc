#include "daemon/local_session.h"

#include <set>

#include "common/device_name.h"
#include "common/graph.h"
#include "common/prune.h"

namespace tfd {
namespace {

struct FeedSpec {
  TensorId id;
  DType dtype = DType::kInvalid;
  PartialShape shape;
};

std::string ArgName(const TensorId& id) { return "_feed/" + id.node + "/" + std::to_string(id.port); }

// What the fed node declares for the fed output: validate just the fed node
// and what it depends on. When that cannot be done (its inputs are broken,
// or fed themselves), fall back to what the feed carries.
FeedSpec DeclaredFeed(const GraphDef& graph, const OpRegistry& registry, const TensorId& id,
                      const Tensor& value) {
  FeedSpec spec{id, value.dtype(), PartialShape::Unknown()};
  auto pruned = PruneGraph(graph, {id.node});
  if (!pruned.ok()) return spec;
  auto g = Graph::Build(std::move(pruned).value(), registry);
  if (!g.ok()) return spec;
  const Graph::Node& n = g->node(g->FindNode(id.node));
  if (id.port < static_cast<int>(n.output_types.size())) {
    spec.dtype = n.output_types[id.port];
    spec.shape = n.output_shapes[id.port];
  }
  return spec;
}

Status CheckFeed(const FeedSpec& spec, const Tensor& t) {
  if (t.dtype() != spec.dtype) {
    return errors::InvalidArgument("feed '", spec.id.ToString(), "' is ", DTypeName(t.dtype()),
                                   " but node '", spec.id.node, "' produces ",
                                   DTypeName(spec.dtype));
  }
  if (!spec.shape.IsCompatibleWith(PartialShape(t.shape()))) {
    return errors::InvalidArgument("feed '", spec.id.ToString(), "' has shape ",
                                   t.shape().ToString(), " but node '", spec.id.node,
                                   "' declares ", spec.shape.ToString());
  }
  return OkStatus();
}

StatusOr<GraphDef> Rewrite(const GraphDef& graph, const OpRegistry& registry,
                           const std::vector<std::pair<TensorId, Tensor>>& feeds,
                           const std::vector<TensorId>& fetches,
                           const std::vector<std::string>& targets, std::vector<FeedSpec>* specs) {
  std::set<std::string> names;
  for (const NodeDef& n : graph.nodes) names.insert(n.name);
  std::map<TensorId, std::string> fed;
  GraphDef out;
  out.version = graph.version;
  for (size_t i = 0; i < feeds.size(); ++i) {
    const TensorId& id = feeds[i].first;
    if (!names.count(id.node)) {
      return errors::NotFound("feed '", id.ToString(), "' names no node in the graph");
    }
    if (fed.count(id)) return errors::InvalidArgument("'", id.ToString(), "' is fed twice");
    FeedSpec spec = DeclaredFeed(graph, registry, id, feeds[i].second);
    TFD_RETURN_IF_ERROR(CheckFeed(spec, feeds[i].second));
    fed[id] = ArgName(id);
    NodeDef arg;
    arg.name = ArgName(id);
    arg.op = "_Arg";
    arg.attrs = {{"T", spec.dtype}, {"index", int64_t(i)}, {"shape", spec.shape}};
    out.nodes.push_back(std::move(arg));
    if (specs) specs->push_back(std::move(spec));
  }
  for (const NodeDef& n : graph.nodes) {
    NodeDef copy = n;
    for (std::string& in : copy.inputs) {
      auto ref = ParseInput(in);
      if (!ref.ok() || ref->control) continue;  // Graph::Build reports bad inputs
      auto it = fed.find(TensorId{ref->node, ref->port});
      if (it != fed.end()) in = it->second;
    }
    out.nodes.push_back(std::move(copy));
  }
  std::vector<std::string> roots;
  for (size_t i = 0; i < fetches.size(); ++i) {
    const TensorId& id = fetches[i];
    if (!names.count(id.node)) {
      return errors::NotFound("fetch '", id.ToString(), "' names no node in the graph");
    }
    auto it = fed.find(id);
    NodeDef ret;
    ret.name = "_fetch/" + std::to_string(i) + "/" + id.node + "/" + std::to_string(id.port);
    ret.op = "_Retval";
    ret.inputs = {it != fed.end() ? it->second : FormatInput({id.node, id.port, false})};
    ret.attrs = {{"index", int64_t(i)}};
    roots.push_back(ret.name);
    out.nodes.push_back(std::move(ret));
  }
  for (const std::string& t : targets) {
    if (!names.count(t)) return errors::NotFound("target '", t, "' names no node in the graph");
    roots.push_back(t);
  }
  return PruneGraph(out, roots);
}

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

StatusOr<GraphDef> RewriteForRun(const GraphDef& graph, const OpRegistry& registry,
                                 const std::vector<std::pair<TensorId, Tensor>>& feeds,
                                 const std::vector<TensorId>& fetches,
                                 const std::vector<std::string>& targets) {
  return Rewrite(graph, registry, feeds, fetches, targets, nullptr);
}

struct LocalSession::Prepared {
  std::vector<FeedSpec> feeds;
  std::unique_ptr<Executor> executor;
};

LocalSession::LocalSession(const OpRegistry& registry, const KernelEnv& env,
                           boost::asio::thread_pool& pool, Options options)
    : registry_(registry), env_(env), pool_(pool), options_(options) {}

LocalSession::~LocalSession() = default;

Status LocalSession::Create(GraphDef graph) {
  std::lock_guard<std::mutex> lock(mu_);
  graph_ = std::move(graph);
  prepared_.clear();
  return OkStatus();
}

Status LocalSession::Extend(const GraphDef& more) {
  std::lock_guard<std::mutex> lock(mu_);
  std::set<std::string> names;
  for (const NodeDef& n : graph_.nodes) names.insert(n.name);
  for (const NodeDef& n : more.nodes) {
    if (names.count(n.name)) {
      return errors::AlreadyExists("node '", n.name, "' is already in the session's graph");
    }
  }
  for (const NodeDef& n : more.nodes) graph_.nodes.push_back(n);
  prepared_.clear();
  return OkStatus();
}

StatusOr<std::shared_ptr<LocalSession::Prepared>> LocalSession::Prepare(
    const Feeds& feeds, const std::vector<std::string>& fetches,
    const std::vector<std::string>& targets) {
  const std::string key = SignatureKey(feeds, fetches, targets);
  std::lock_guard<std::mutex> lock(mu_);
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
                       Rewrite(graph_, registry_, feed_ids, fetch_ids, targets, &prepared->feeds));
  // One process, one CPU device: check each request parses, and say once
  // what cannot be honoured here.
  bool warned_gpu = false, warned_task = false;
  for (const NodeDef& n : rewritten.nodes) {
    auto d = DeviceName::Parse(n.device);
    if (!d.ok()) return d.status().WithContext("node '" + n.name + "' (" + n.op + ")");
    if (d->type == std::string(kDeviceGpu) && !warned_gpu && env_.logger) {
      env_.logger->info("no usable GPU here: node '{}' and any other GPU request run on CPU", n.name);
      warned_gpu = true;
    }
    if ((d->job || d->task) && !warned_task && env_.logger) {
      env_.logger->info("in-process run: node '{}' asks for {}; every node runs in this process",
                        n.name, d->TaskName());
      warned_task = true;
    }
  }
  TFD_ASSIGN_OR_RETURN(Graph g, Graph::Build(std::move(rewritten), registry_));
  Executor::Options eo{&registry_, &env_, &pool_, kDeviceCpu, env_.task + "/device:CPU:0"};
  TFD_ASSIGN_OR_RETURN(prepared->executor,
                       Executor::Create(std::make_shared<const Graph>(std::move(g)), eo));
  prepared_.emplace(key, prepared);
  return prepared;
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
  int64_t step_id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    step_id = next_step_id_++;
  }
  const auto deadline = options.deadline.count() > 0 ? options.deadline : options_.default_deadline;
  CancellationManager cancellation;
  Executor::RunArgs args;
  args.step_id = step_id;
  args.frame = &frame;
  args.cancellation = &cancellation;
  args.deadline = std::chrono::steady_clock::now() + deadline;
  args.trace = options.trace;
  RunOutput out;
  TFD_RETURN_IF_ERROR(prepared->executor->Run(args, &out.stats));
  out.fetches = std::move(frame.retvals);
  return out;
}

}  // namespace tfd
