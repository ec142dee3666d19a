#include "daemon/runtime/executor.h"

#include <algorithm>
#include <atomic>
#include <boost/asio/post.hpp>
#include <deque>
#include <future>

#include "common/allowed_cpus.h"
#include "common/device_name.h"
#include "common/mutex.h"
#include "common/thread_name.h"
#include "daemon/runtime/step_deadlines.h"

namespace tfd {
namespace {

int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string Where(const Graph::Node& n) { return "node '" + n.name() + "' (" + n.op() + ")"; }

}  // namespace

// The nodes one thread runs next for one step. A kernel that finishes
// while this thread is already working on the step (an asynchronous kernel
// whose callback fires at once, say) adds to this list instead of starting a
// nested loop, so long chains never deepen the stack.
struct Worklist {
  const void* step = nullptr;
  std::deque<int> nodes;
  int kept = -1;  // the expensive node queued behind cheap ones, or -1
};
thread_local Worklist* tl_worklist = nullptr;
// True while this thread may keep one expensive node for itself: while it
// runs work an executor posted to its compute pool, or calls a blocking
// Run, which would only wait otherwise. An event loop never may.
thread_local bool tl_may_keep = false;

// The state of one running step. Shared by the callbacks that drive it;
// destroyed when the last of them lets go, after `done` has run.
//
// Where nodes run: a cheap kernel (OpKernel::is_cheap, every asynchronous
// kernel, whose ComputeAsync only registers a callback, and in a step of a
// blocking Run a kernel measured cheap, see kernel_costs.h) runs on the
// thread that made it ready, be it the caller of RunAsync (the event loop,
// for a task), a pool thread or the thread that completed a transfer. An
// expensive kernel goes to the compute pool, except that a pool thread, or
// the caller of a blocking Run, keeps one for itself, to run after the cheap
// ones it has queued. So a step of cheap nodes only, an empty one say, never
// leaves the caller's thread, and a step of one expensive node after another
// never leaves a blocking caller's. With Options::inline_kernels every
// kernel is treated as cheap.
struct Executor::Step : std::enable_shared_from_this<Executor::Step> {
  Step(const Executor& e, const RunArgs& a, DoneCallback d)
      : exec(e),
        graph(*e.graph_),
        args(a),
        done(std::move(d)),
        pending(graph.num_nodes()),
        inputs(graph.num_nodes()),
        running(graph.num_nodes()),
        dead_input(graph.num_nodes()),
        remaining(graph.num_nodes()) {
    ctx.step_id = a.step_id;
    ctx.cancellation = a.cancellation;
    ctx.deadline = a.deadline;
    ctx.frame = a.frame;
    ctx.rendezvous = a.rendezvous;
    ctx.trace = a.trace;
    ctx.master = exec.options_.master;
    ctx.session = exec.options_.session;
    for (int i = 0; i < graph.num_nodes(); ++i) {
      const Graph::Node& n = graph.node(i);
      pending[i].store(static_cast<int>(n.inputs.size() + n.control_inputs.size()),
                       std::memory_order_relaxed);
      inputs[i].resize(n.inputs.size());
    }
  }

  void Start();
  // Runs `ready` and whatever they make ready on this thread, as the rules
  // above allow.
  void Drain(std::vector<int>& ready);
  // Sorts newly ready nodes: cheap ones (and, on a pool thread with nothing
  // else to do, one expensive one) onto `list`, the rest to the pool.
  void Dispatch(std::vector<int>& ready, Worklist& list);
  void Post(int id);
  void RunOne(int id, std::vector<int>& ready);
  // Whether node `id` must not run because a dead value reached it (a Merge
  // runs unless every data input is dead); see Value.
  bool IsDead(int id) const;
  // Skips dead node `id`: every output dead, control consumers told.
  void SkipDead(int id, std::vector<int>& ready);
  void NodeDone(int id, OpKernelContext* kctx, int64_t start, std::vector<int>& ready,
                std::vector<Value> outputs = {}, bool dead = false);
  void RecordError(const Status& s, bool from_kernel);
  void Finish();

  const Executor& exec;
  const Graph& graph;
  RunArgs args;
  DoneCallback done;
  // Started by a blocking Run: kernels measured cheap run inline too.
  bool blocking = false;
  StepContext ctx;
  std::vector<std::atomic<int>> pending;     // unfinished inputs per node
  std::vector<std::vector<Value>> inputs;    // each slot written once by its producer
  std::vector<std::atomic<bool>> running;    // started and not finished, for the deadline's message
  std::vector<std::atomic<bool>> dead_input; // a dead value or a dead node's control edge arrived
  std::atomic<int> remaining;                // nodes not yet finished or skipped
  std::atomic<bool> aborted{false};
  std::optional<CancellationManager::Token> cancel_token;
  std::optional<StepDeadlines::Id> deadline;

  Mutex mu;
  Status status GUARDED_BY(mu);
  bool status_from_cancel GUARDED_BY(mu) = false;
  StepStats stats GUARDED_BY(mu);
};

void Executor::Step::Start() {
  auto self = shared_from_this();
  cancel_token = args.cancellation->Register([self](const Status& reason) {
    MutexLock lock(self->mu);
    if (self->status.ok()) {
      self->status = reason.ok() ? errors::Cancelled("step cancelled") : reason;
      self->status_from_cancel = true;
    }
    self->aborted = true;
  });
  if (!cancel_token) {
    MutexLock lock(mu);
    Status reason = args.cancellation->reason();
    status = reason.ok() ? errors::Cancelled("step cancelled before it started") : reason;
    aborted = true;
  }
  if (args.deadline != std::chrono::steady_clock::time_point::max()) {
    deadline = StepDeadlines::Shared().Add(args.deadline, [self] {
      std::string waiting;
      StatusDetails first;  // the first node still running is what the step waited on
      for (int id = 0; id < self->graph.num_nodes(); ++id) {
        if (!self->running[id].load()) continue;
        const Graph::Node& node = self->graph.node(id);
        waiting += (waiting.empty() ? "" : ", ") + Where(node);
        if (first.node.empty()) first = {.node = node.name(), .op = node.op()};
      }
      self->args.cancellation->Cancel(
          errors::DeadlineExceeded("step ", self->args.step_id, " passed its deadline",
                                   waiting.empty() ? std::string() : "; still running: " + waiting)
              .WithDetails(first));
    });
  }
  if (graph.num_nodes() == 0) {
    Finish();
    return;
  }
  std::vector<int> ready(exec.roots_.begin(), exec.roots_.end());
  Drain(ready);
}

void Executor::Step::Dispatch(std::vector<int>& ready, Worklist& list) {
  int keep = -1;
  for (int id : ready) {
    if (exec.RunsInline(id, blocking)) {
      list.nodes.push_back(id);
      continue;
    }
    if (keep >= 0) Post(keep);
    keep = id;
  }
  ready.clear();
  if (keep < 0) return;
  // A pool thread (or a blocking Run's caller) keeps one expensive node,
  // after the cheap ones it has queued: it will be free for it soon, and
  // handing it to another thread costs a wake-up and the inputs' cache lines
  // (more than the classic model's kernels themselves on a 2-vCPU guest).
  // The caller keeps one only together with measured-cheap inlining: alone,
  // the small kernels of a fan-out still went to the pool, and the two
  // threads took turns (bench/NOTES.md, "Kernels measured cheap").
  if (tl_may_keep && list.kept < 0) {
    list.nodes.push_back(keep);
    list.kept = keep;
    return;
  }
  Post(keep);
}

void Executor::Step::Post(int id) {
  boost::asio::post(*exec.options_.pool, [self = shared_from_this(), id] {
    const bool could_keep = tl_may_keep;
    tl_may_keep = true;
    std::vector<int> one{id};
    self->Drain(one);
    tl_may_keep = could_keep;
  });
}

void Executor::Step::Drain(std::vector<int>& ready) {
  if (tl_worklist != nullptr && tl_worklist->step == this) {
    // This thread is already running the step, further up its stack.
    Dispatch(ready, *tl_worklist);
    return;
  }
  auto self = shared_from_this();  // Finish may drop the caller's reference
  Worklist list{this, {}, -1};
  Worklist* const outer = tl_worklist;
  tl_worklist = &list;
  Dispatch(ready, list);
  while (!list.nodes.empty()) {
    const int id = list.nodes.front();
    list.nodes.pop_front();
    if (id == list.kept) list.kept = -1;
    RunOne(id, ready);
    Dispatch(ready, list);
  }
  tl_worklist = outer;
}

void Executor::Step::RunOne(int id, std::vector<int>& ready) {
  const Graph::Node& node = graph.node(id);
  if (aborted) {
    NodeDone(id, nullptr, 0, ready);
    return;
  }
  if (dead_input[id].load(std::memory_order_acquire) && IsDead(id)) {
    SkipDead(id, ready);
    return;
  }
  // A value input fed by a reference (a variable) reads it now.
  std::vector<Value> in = std::move(inputs[id]);
  for (size_t k = 0; k < in.size(); ++k) {
    if (!node.input_refs[k] && in[k].is_ref() && !in[k].is_dead) {
      if (in[k].tensor.initialized()) {  // the producer's own result
        in[k].ref = nullptr;
        continue;
      }
      auto v = in[k].ref->Read();
      if (!v.ok()) {
        RecordError(
            v.status().WithContext("input " + std::to_string(k)).WithNode(node.name(), node.op()),
            true);
        NodeDone(id, nullptr, 0, ready);
        return;
      }
      in[k] = Value{std::move(v).value(), nullptr};
    }
  }
  running[id].store(true, std::memory_order_relaxed);
  const int64_t start = args.trace ? NowMicros() : 0;
  OpKernel& kernel = *exec.kernels_[id];
  if (!kernel.is_async()) {
    OpKernelContext kctx(kernel, *exec.options_.env, ctx, std::move(in), node.output_types);
    if (!blocking || exec.cheap_[id] || exec.options_.inline_kernels) {
      kernel.Compute(kctx);  // no use for its cost (see RunsInline)
    } else {
      const auto began = std::chrono::steady_clock::now();
      kernel.Compute(kctx);
      exec.costs_.Record(id, std::chrono::steady_clock::now() - began);
    }
    NodeDone(id, &kctx, start, ready);
    return;
  }
  auto kctx = std::make_shared<OpKernelContext>(kernel, *exec.options_.env, ctx, std::move(in),
                                                node.output_types);
  OpKernelContext* raw = kctx.get();
  static_cast<AsyncOpKernel&>(kernel).ComputeAsync(
      *raw, [self = shared_from_this(), id, start, owned = std::move(kctx)] {
        std::vector<int> later;
        self->NodeDone(id, owned.get(), start, later);
        self->Drain(later);
      });
}

void Executor::Step::NodeDone(int id, OpKernelContext* kctx, int64_t start, std::vector<int>& ready,
                              std::vector<Value> outputs, bool dead) {
  const Graph::Node& node = graph.node(id);
  if (kctx != nullptr) {
    Status s = kctx->status();
    if (s.ok()) {
      outputs = std::move(kctx->outputs());
      for (size_t i = 0; i < outputs.size() && s.ok(); ++i) {
        if (outputs[i].is_dead) continue;
        const bool ok = node.output_refs[i] ? outputs[i].is_ref()
                                            : outputs[i].tensor.dtype() == node.output_types[i];
        if (!ok) {
          s = errors::Internal("kernel produced ", outputs[i].tensor.Describe(), " for output ", i,
                               ", declared ", node.output_refs[i] ? "a reference to " : "",
                               DTypeName(node.output_types[i]));
        }
      }
    }
    // The node is named in the details, for whoever decides on which node failed.
    if (!s.ok()) RecordError(s.WithNode(node.name(), node.op()), true);
    running[id].store(false, std::memory_order_relaxed);
    if (args.trace) {
      MutexLock lock(mu);
      stats.nodes.push_back({node.name(), node.op(), exec.kernels_[id]->node().device, start, NowMicros(),
                             ThisThreadId(), ThisThreadName(), kctx->trace_label()});
    }
  }
  // A node whose every output is dead (a _Recv of a dead value) is dead to
  // its control consumers too; only they need to know.
  if (!dead && !node.control_consumers.empty() && !outputs.empty()) {
    dead = std::all_of(outputs.begin(), outputs.end(), [](const Value& v) { return v.is_dead; });
  }
  if (!aborted && !outputs.empty()) {
    for (const Graph::Edge& c : node.consumers) {
      Value& v = inputs[c.node][c.port];
      v = outputs[graph.node(c.node).inputs[c.port].port];
      // Before the pending count drops below, so the consumer sees it.
      if (v.is_dead) dead_input[c.node].store(true, std::memory_order_relaxed);
    }
  }
  for (const Graph::Edge& c : node.consumers) {
    if (pending[c.node].fetch_sub(1, std::memory_order_acq_rel) == 1) ready.push_back(c.node);
  }
  for (int c : node.control_consumers) {
    if (dead) dead_input[c].store(true, std::memory_order_relaxed);
    if (pending[c].fetch_sub(1, std::memory_order_acq_rel) == 1) ready.push_back(c);
  }
  if (remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) Finish();
}

bool Executor::Step::IsDead(int id) const {
  const std::string& op = graph.node(id).op();
  // A _Send carries deadness to its _Recv on the other side.
  if (op == "_Send") return false;
  if (op != "Merge") return true;
  for (const Value& v : inputs[id]) {
    if (!v.is_dead) return false;
  }
  return true;
}

void Executor::Step::SkipDead(int id, std::vector<int>& ready) {
  const Graph::Node& node = graph.node(id);
  // A fetch has no value to return (TensorFlow: "Retval does not have value").
  if (node.op() == "_Retval") {
    RecordError(errors::InvalidArgument("the fetched tensor '", node.def.inputs.at(0),
                                        "' is dead: it is on the untaken side of a Switch")
                    .WithNode(node.name(), node.op()),
                true);
    NodeDone(id, nullptr, 0, ready);
    return;
  }
  std::vector<Value> outputs(node.output_types.size(), Value::Dead());
  NodeDone(id, nullptr, 0, ready, std::move(outputs), /*dead=*/true);
}

void Executor::Step::RecordError(const Status& s, bool from_kernel) {
  {
    MutexLock lock(mu);
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
  // First, so that a deadline firing now has cancelled what it will before
  // `done` lets the caller free the cancellation manager.
  if (deadline) StepDeadlines::Shared().Remove(*deadline);
  if (cancel_token) args.cancellation->Deregister(*cancel_token);
  Status final_status;
  StepStats final_stats;
  {
    MutexLock lock(mu);
    final_status = status;
    final_stats = std::move(stats);
  }
  done(final_status, std::move(final_stats));
}

Executor::Executor(PrivateKey, std::shared_ptr<const Graph> graph, const Options& options)
    : graph_(std::move(graph)), options_(options), costs_(graph_->num_nodes()) {}

Executor::~Executor() = default;

StatusOr<std::unique_ptr<Executor>> Executor::Create(std::shared_ptr<const Graph> graph,
                                                     const Options& options) {
  auto e = std::make_unique<Executor>(PrivateKey{}, std::move(graph), options);
  const Graph& g = *e->graph_;
  for (int id = 0; id < g.num_nodes(); ++id) {
    const Graph::Node& n = g.node(id);
    // A node placed on a GPU (daemon/runtime/device_copies.h has put copies
    // on its edges) runs that GPU's kernel; every other node the executor's.
    NodeInfo info{n.name(), n.op(), options.device};
    std::string device_type = options.device_type;
    if (!n.def.device.empty()) {
      auto d = DeviceName::Parse(n.def.device);
      if (!d.ok()) return d.status().WithNode(n.name(), n.op());
      if (d->type == std::string(kDeviceGpu)) {
        const int gpu = d->id.value_or(0);
        if (gpu >= static_cast<int>(options.env->gpus.size())) {
          return errors::InvalidArgument(Where(n), " is placed on ", n.def.device, " but this task has ",
                                         options.env->gpus.size(), " usable GPUs")
              .WithDetails({.node = n.name(), .op = n.op()});
        }
        device_type = kDeviceGpu;
        info.memory = options.env->gpus[gpu];
        info.device = n.def.device;
        if (auto hm = n.reg->host_memory.find(kDeviceGpu); hm != n.reg->host_memory.end()) {
          info.host_outputs = hm->second.outputs;
        }
      }
    }
    auto it = n.reg->kernels.find(device_type);
    if (it == n.reg->kernels.end()) {
      return errors::NotFound("no ", device_type, " kernel for op ", n.op())
          .WithNode(n.name(), n.op());
    }
    OpKernelConstruction construction(info, n.reg->def, n.def.attrs, n.input_types,
                                      n.output_types, *options.env);
    auto kernel = it->second(construction);
    if (!kernel.ok()) {
      return kernel.status().WithNode(n.name(), n.op());
    }
    e->cheap_.push_back((*kernel)->is_cheap() || (*kernel)->is_async());
    e->kernels_.push_back(std::move(kernel).value());
    if (n.inputs.empty() && n.control_inputs.empty()) e->roots_.push_back(id);
  }
  return e;
}

bool Executor::RunsInline(int id, bool measured) const {
  return cheap_[id] || options_.inline_kernels || (measured && costs_.Cheap(id));
}

void Executor::RunAsync(const RunArgs& args, DoneCallback done) {
  Start(args, std::move(done), /*blocking=*/false);
}

void Executor::Start(const RunArgs& args, DoneCallback done, bool blocking) {
  auto step = std::make_shared<Step>(*this, args, std::move(done));
  step->blocking = blocking;
  step->Start();
}

Status Executor::Run(const RunArgs& args, StepStats* stats) {
  std::promise<std::pair<Status, StepStats>> result;
  auto future = result.get_future();
  // This thread would only wait: it works on the step as a pool thread does.
  const bool could_keep = tl_may_keep;
  tl_may_keep = true;
  Start(args, [&result](const Status& s, StepStats st) { result.set_value({s, std::move(st)}); },
        /*blocking=*/true);
  tl_may_keep = could_keep;
  // The step's own deadline bounds this wait: the executor cancels the step
  // then, and cancellation ends every kernel's wait.
  auto [status, st] = future.get();
  if (stats != nullptr) *stats = std::move(st);
  return status;
}

bool InlineKernelsFor(int threads) { return threads == 0 && NumAllowedCpus() == 1; }

}  // namespace tfd
