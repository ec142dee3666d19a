#include "python/src/local_runner.h"

#include <optional>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "common/allowed_cpus.h"
#include "daemon/runtime/executor.h"
#include "kernels/gpu/gpu_device.h"
#include "python/src/errors.h"
#include "python/src/signals.h"

namespace tfd::python {

namespace py = pybind11;

namespace {

// The nodes of `graph` from `first` on: what a session that has the rest
// needs to catch up.
GraphDef NodesFrom(const GraphDef& graph, int first) {
  GraphDef more;
  more.versions = graph.versions;
  more.nodes.assign(graph.nodes.begin() + first, graph.nodes.end());
  return more;
}

std::shared_ptr<spdlog::logger> MakeLogger() {
  auto logger = std::make_shared<spdlog::logger>(
      "tfd-python", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  logger->set_level(spdlog::level::warn);
  return logger;
}

}  // namespace

LocalRunner::LocalRunner(const OpRegistry& registry, const std::vector<std::string>& io_dirs)
    : registry_(registry), pool_(NumAllowedCpus()) {
  env_.resources = &resources_;
  env_.logger = MakeLogger();
  for (const std::string& d : io_dirs) env_.io_dirs.emplace_back(d);
  env_.gpus = gpu::GpuMemories();
  session_ = std::make_unique<LocalSession>(
      registry_, env_, pool_,
      LocalSession::Options{.allow_soft_placement = true, .inline_kernels = InlineKernelsFor(0)});
}

LocalRunner::~LocalRunner() {
  py::gil_scoped_release release;  // kernels may drop fed arrays, which takes the GIL
  session_.reset();
  pool_.join();
}

Status LocalRunner::Sync(const GraphBuilder& graph) {
  TFD_RETURN_IF_ERROR(CheckSameGraph(graph_, graph));
  if (graph_ != nullptr && synced_nodes_ == graph.num_nodes()) return OkStatus();
  GraphDef def = graph.ToGraphDef();
  const int n = static_cast<int>(def.nodes.size());
  TFD_RETURN_IF_ERROR(graph_ == nullptr ? session_->Create(std::move(def))
                                        : session_->Extend(NodesFrom(def, synced_nodes_)));
  graph_ = &graph;
  synced_nodes_ = n;
  return OkStatus();
}

py::list LocalRunner::Run(const GraphBuilder& graph, const PyFeeds& feeds,
                          const std::vector<std::string>& fetches,
                          const std::vector<std::string>& targets, double timeout_s) {
  return ToNumpy(Step(graph, feeds, fetches, targets, timeout_s, /*trace=*/false).fetches);
}

py::tuple LocalRunner::RunTraced(const GraphBuilder& graph, const PyFeeds& feeds,
                                 const std::vector<std::string>& fetches,
                                 const std::vector<std::string>& targets, double timeout_s) {
  LocalSession::RunOutput out = Step(graph, feeds, fetches, targets, timeout_s, /*trace=*/true);
  return py::make_tuple(ToNumpy(std::move(out.fetches)), StatsToPython(out.stats));
}

LocalSession::RunOutput LocalRunner::Step(const GraphBuilder& graph, const PyFeeds& feeds,
                                          const std::vector<std::string>& fetches,
                                          const std::vector<std::string>& targets, double timeout_s,
                                          bool trace) {
  ThrowIfError(Sync(graph));
  LocalSession::Feeds tensors = TensorFeeds(feeds, /*local=*/true);
  LocalSession::RunOptions options;
  options.deadline = Millis(timeout_s);
  options.trace = trace;
  // Ctrl-C cancels the step; the session goes on (RemoteRunner closes
  // its, having no other way to cancel one step).
  std::optional<py::error_already_set> raised;
  options.interrupted = [&raised] { return (raised = RaisedBySignalHandlers()).has_value(); };
  StatusOr<LocalSession::RunOutput> out = Status();
  {
    py::gil_scoped_release release;
    out = session_->Run(tensors, fetches, targets, options);
  }
  if (raised) throw std::move(*raised);
  return ValueOrThrow(std::move(out));
}

void LocalRunner::Close() {
  py::gil_scoped_release release;  // a woken step may end, dropping fed arrays
  session_->Close();
}

}  // namespace tfd::python
