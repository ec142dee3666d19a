#include "daemon/runtime/executor.h"

#include <atomic>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <deque>
#include <future>
#include <mutex>
#include <set>
#include <thread>

namespace tfd {
namespace {

int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string Where(const Graph::Node& n) { return "node '" + n.name() + "' (" + n.op() + ")"; }

}  // namespace

// The state of one running step. Shared by the callbacks that drive it;
// destroyed when the last of them lets go, after `done` has run.
struct Executor::Step : std::enable_shared_from_this<Executor::Step> {
  Step(const Executor& e, const RunArgs& a, DoneCallback d)
      : exec(e),
        graph(*e.graph_),
        args(a),
        done(std::move(d)),
        pending(graph.num_nodes()),
        inputs(graph.num_nodes()),
        remaining(graph.num_nodes()) {
    ctx.step_id = a.step_id;
    ctx.cancellation = a.cancellation;
    ctx.deadline = a.deadline;
    ctx.frame = a.frame;
    ctx.rendezvous = a.rendezvous;
    ctx.trace = a.trace;
    for (int i = 0; i < graph.num_nodes(); ++i) {
      const Graph::Node& n = graph.node(i);
      pending[i].store(static_cast<int>(n.inputs.size() + n.control_inputs.size()));
      inputs[i].resize(n.inputs.size());
    }
  }

  void Start();
  void Process(int id);
  void RunOne(int id, std::deque<int>& inline_ready);
  void NodeDone(int id, OpKernelContext* kctx, int64_t start, std::deque<int>& ready);
  void Schedule(std::deque<int>& ready, bool keep_first);
  void RecordError(const Status& s, bool from_kernel);
  void Finish();

  const Executor& exec;
  const Graph& graph;
  RunArgs args;
  DoneCallback done;
  StepContext ctx;
  std::vector<std::atomic<int>> pending;     // unfinished inputs per node
  std::vector<std::vector<Value>> inputs;    // each slot written once by its producer
  std::atomic<int> remaining;                // nodes not yet finished or skipped
  std::atomic<bool> aborted{false};
  std::optional<CancellationManager::Token> cancel_token;
  std::unique_ptr<boost::asio::steady_timer> timer;

  std::mutex mu;
  Status status;                 // guarded by mu
  bool status_from_cancel = false;  // guarded by mu
  std::set<int> running;         // guarded by mu
  StepStats stats;               // guarded by mu
};

void Executor::Step::Start() {
  auto self = shared_from_this();
  cancel_token = args.cancellation->Register([self](const Status& reason) {
    std::lock_guard<std::mutex> lock(self->mu);
    if (self->status.ok()) {
      self->status = reason.ok() ? errors::Cancelled("step cancelled") : reason;
      self->status_from_cancel = true;
    }
    self->aborted = true;
  });
  if (!cancel_token) {
    std::lock_guard<std::mutex> lock(mu);
    Status reason = args.cancellation->reason();
    status = reason.ok() ? errors::Cancelled("step cancelled before it started") : reason;
    aborted = true;
  }
  if (args.deadline != std::chrono::steady_clock::time_point::max()) {
    timer = std::make_unique<boost::asio::steady_timer>(*exec.options_.pool, args.deadline);
    timer->async_wait([self](const boost::system::error_code& ec) {
      if (ec) return;  // cancelled: the step finished in time
      std::string waiting;
      {
        std::lock_guard<std::mutex> lock(self->mu);
        for (int id : self->running) {
          waiting += (waiting.empty() ? "" : ", ") + Where(self->graph.node(id));
        }
      }
      self->args.cancellation->Cancel(errors::DeadlineExceeded(
          "step ", self->args.step_id, " passed its deadline",
          waiting.empty() ? std::string() : "; still running: " + waiting));
    });
  }
  if (graph.num_nodes() == 0) {
    Finish();
    return;
  }
  std::deque<int> ready(exec.roots_.begin(), exec.roots_.end());
  Schedule(ready, /*keep_first=*/false);
}

void Executor::Step::Schedule(std::deque<int>& ready, bool keep_first) {
  // Post all but (optionally) the first; the caller runs that one inline,
  // which saves a hop through the pool on long chains.
  const size_t first = keep_first ? 1 : 0;
  while (ready.size() > first) {
    const int id = ready.back();
    ready.pop_back();
    boost::asio::post(*exec.options_.pool, [self = shared_from_this(), id] { self->Process(id); });
  }
}

void Executor::Step::Process(int id) {
  std::deque<int> ready{id};
  while (!ready.empty()) {
    const int next = ready.front();
    ready.pop_front();
    RunOne(next, ready);
  }
}

void Executor::Step::RunOne(int id, std::deque<int>& ready) {
  const Graph::Node& node = graph.node(id);
  if (aborted) {
    NodeDone(id, nullptr, 0, ready);
    return;
  }
  // A value input fed by a reference (a variable) reads it now.
  std::vector<Value> in = std::move(inputs[id]);
  for (size_t k = 0; k < in.size(); ++k) {
    if (!node.input_refs[k] && in[k].is_ref()) {
      if (in[k].tensor.initialized()) {  // the producer's own result
        in[k].ref = nullptr;
        continue;
      }
      auto v = in[k].ref->Read();
      if (!v.ok()) {
        RecordError(Status(v.status().code(), Where(node) + ": input " + std::to_string(k) + ": " +
                                                  v.status().message()),
                    true);
        NodeDone(id, nullptr, 0, ready);
        return;
      }
      in[k] = Value{std::move(v).value(), nullptr};
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    running.insert(id);
  }
  const int64_t start = args.trace ? NowMicros() : 0;
  OpKernel& kernel = *exec.kernels_[id];
  auto kctx = std::make_unique<OpKernelContext>(kernel, *exec.options_.env, ctx, std::move(in),
                                                node.output_types);
  if (!kernel.is_async()) {
    kernel.Compute(*kctx);
    NodeDone(id, kctx.get(), start, ready);
    Schedule(ready, /*keep_first=*/true);
    return;
  }
  OpKernelContext* raw = kctx.get();
  static_cast<AsyncOpKernel&>(kernel).ComputeAsync(
      *raw, [self = shared_from_this(), id, start, owned = std::shared_ptr<OpKernelContext>(std::move(kctx))] {
        std::deque<int> later;
        self->NodeDone(id, owned.get(), start, later);
        self->Schedule(later, /*keep_first=*/false);
      });
}

void Executor::Step::NodeDone(int id, OpKernelContext* kctx, int64_t start, std::deque<int>& ready) {
  const Graph::Node& node = graph.node(id);
  std::vector<Value> outputs;
  if (kctx != nullptr) {
    Status s = kctx->status();
    if (s.ok()) {
      outputs = std::move(kctx->outputs());
      for (size_t i = 0; i < outputs.size() && s.ok(); ++i) {
        const bool ok = node.output_refs[i] ? outputs[i].is_ref()
                                            : outputs[i].tensor.dtype() == node.output_types[i];
        if (!ok) {
          s = errors::Internal("kernel produced ", outputs[i].tensor.Describe(), " for output ", i,
                               ", declared ", node.output_refs[i] ? "a reference to " : "",
                               DTypeName(node.output_types[i]));
        }
      }
    }
    if (!s.ok()) RecordError(Status(s.code(), Where(node) + ": " + s.message()), true);
    std::lock_guard<std::mutex> lock(mu);
    running.erase(id);
    if (args.trace) {
      stats.nodes.push_back({node.name(), node.op(), exec.options_.device, start, NowMicros(),
                             std::hash<std::thread::id>()(std::this_thread::get_id()) % 1000,
                             kctx != nullptr ? kctx->trace_label() : std::string()});
    }
  }
  if (!aborted && !outputs.empty()) {
    for (const Graph::Edge& c : node.consumers) {
      inputs[c.node][c.port] = outputs[graph.node(c.node).inputs[c.port].port];
    }
  }
  for (const Graph::Edge& c : node.consumers) {
    if (pending[c.node].fetch_sub(1) == 1) ready.push_back(c.node);
  }
  for (int c : node.control_consumers) {
    if (pending[c].fetch_sub(1) == 1) ready.push_back(c);
  }
  if (remaining.fetch_sub(1) == 1) Finish();
}

void Executor::Step::RecordError(const Status& s, bool from_kernel) {
  {
    std::lock_guard<std::mutex> lock(mu);
    // A kernel woken by the cancellation says best what it was waiting for:
    // prefer its message to the bare reason when the codes agree.
    if (status.ok() || (from_kernel && status_from_cancel && s.code() == status.code())) {
      status = s;
      status_from_cancel = false;
    }
    aborted = true;
  }
  args.cancellation->Cancel(s);
}

void Executor::Step::Finish() {
  if (timer) timer->cancel();
  if (cancel_token) args.cancellation->Deregister(*cancel_token);
  Status final_status;
  StepStats final_stats;
  {
    std::lock_guard<std::mutex> lock(mu);
    final_status = status;
    final_stats = std::move(stats);
  }
  done(final_status, std::move(final_stats));
}

Executor::Executor(PrivateKey, std::shared_ptr<const Graph> graph, const Options& options)
    : graph_(std::move(graph)), options_(options) {}

Executor::~Executor() = default;

StatusOr<std::unique_ptr<Executor>> Executor::Create(std::shared_ptr<const Graph> graph,
                                                     const Options& options) {
  auto e = std::make_unique<Executor>(PrivateKey{}, std::move(graph), options);
  const Graph& g = *e->graph_;
  for (int id = 0; id < g.num_nodes(); ++id) {
    const Graph::Node& n = g.node(id);
    auto it = n.reg->kernels.find(options.device_type);
    if (it == n.reg->kernels.end()) {
      return errors::NotFound(Where(n), ": no ", options.device_type, " kernel for op ", n.op());
    }
    NodeInfo info{n.name(), n.op(), options.device};
    OpKernelConstruction construction(info, n.reg->def, n.def.attrs, n.input_types,
                                      n.output_types, *options.env);
    auto kernel = it->second(construction);
    if (!kernel.ok()) {
      return Status(kernel.status().code(), Where(n) + ": " + kernel.status().message());
    }
    e->kernels_.push_back(std::move(kernel).value());
    if (n.inputs.empty() && n.control_inputs.empty()) e->roots_.push_back(id);
  }
  return e;
}

void Executor::RunAsync(const RunArgs& args, DoneCallback done) {
  auto step = std::make_shared<Step>(*this, args, std::move(done));
  step->Start();
}

Status Executor::Run(const RunArgs& args, StepStats* stats) {
  std::promise<std::pair<Status, StepStats>> result;
  auto future = result.get_future();
  RunAsync(args, [&result](const Status& s, StepStats st) { result.set_value({s, std::move(st)}); });
  // The step's own deadline bounds this wait: the executor cancels the step
  // then, and cancellation ends every kernel's wait.
  auto [status, st] = future.get();
  if (stats != nullptr) *stats = std::move(st);
  return status;
}

}  // namespace tfd
