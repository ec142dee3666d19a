#include "daemon/runtime/executor.h"

#include <algorithm>
#include <atomic>
#include <boost/asio/post.hpp>
#include <deque>
#include <future>
#include <map>
#include <optional>

#include "common/allowed_cpus.h"
#include "common/device_name.h"
#include "common/mutex.h"
#include "common/thread_name.h"
#include "daemon/runtime/executor_step.h"
#include "daemon/runtime/step_deadlines.h"

namespace tfd {
namespace {

int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string Where(const Graph::Node& n) { return "node '" + n.name() + "' (" + n.op() + ")"; }

// The step's context for one run of a transfer inside a while loop: the
// step's own, with a rendezvous that keys on the frame and iteration.
struct FramedStep {
  FramedStep(const StepContext& step, uint64_t frame_id, int64_t iter)
      : rendezvous(*step.rendezvous, frame_id, iter), ctx(step) {
    ctx.rendezvous = &rendezvous;
  }
  FrameRendezvous rendezvous;
  StepContext ctx;
};

}  // namespace

// The nodes one thread runs next for one step. A kernel that finishes
// while this thread is already working on the step (an asynchronous kernel
// whose callback fires at once, say) adds to this list instead of starting a
// nested loop, so long chains never deepen the stack.
struct Worklist {
  const void* step = nullptr;
  std::deque<TaggedNode> nodes;
  TaggedNode kept;  // the expensive node queued behind cheap ones; id -1 if none
};
thread_local Worklist* tl_worklist = nullptr;
// True while this thread may keep one expensive node for itself: while it
// runs work an executor posted to its compute pool, or calls a blocking
// Run, which would only wait otherwise. An event loop never may.
thread_local bool tl_may_keep = false;

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
  if (exec.roots_.empty()) {
    Finish();
    return;
  }
  std::vector<TaggedNode> ready;
  for (int id : exec.roots_) ready.push_back({id, &root, 0, root_state});
  outstanding.store(static_cast<int64_t>(ready.size()), std::memory_order_relaxed);
  Drain(ready);
}

void Executor::Step::Dispatch(std::vector<TaggedNode>& ready, Worklist& list) {
  TaggedNode keep;
  for (const TaggedNode& t : ready) {
    const std::span<const Value> in(t.state->inputs_of(t.frame->info, lf.local[t.id]),
                                    graph.node(t.id).inputs.size());
    if (exec.RunsInline(t.id, in, blocking)) {
      list.nodes.push_back(t);
      continue;
    }
    if (keep.id >= 0) Post(keep);
    keep = t;
  }
  ready.clear();
  if (keep.id < 0) return;
  // A pool thread (or a blocking Run's caller) keeps one expensive node,
  // after the cheap ones it has queued: it will be free for it soon, and
  // handing it to another thread costs a wake-up and the inputs' cache lines
  // (more than the classic model's kernels themselves on a 2-vCPU guest).
  // The caller keeps one only together with measured-cheap inlining: alone,
  // the small kernels of a fan-out still went to the pool, and the two
  // threads took turns (bench/NOTES.md, "Kernels measured cheap").
  if (tl_may_keep && list.kept.id < 0) {
    list.nodes.push_back(keep);
    list.kept = keep;
    return;
  }
  Post(keep);
}

void Executor::Step::Post(const TaggedNode& t) {
  boost::asio::post(*exec.options_.pool, [self = shared_from_this(), t] {
    const bool could_keep = tl_may_keep;
    tl_may_keep = true;
    std::vector<TaggedNode> one{t};
    self->Drain(one);
    tl_may_keep = could_keep;
  });
}

void Executor::Step::Drain(std::vector<TaggedNode>& ready) {
  if (tl_worklist != nullptr && tl_worklist->step == this) {
    // This thread is already running the step, further up its stack.
    Dispatch(ready, *tl_worklist);
    return;
  }
  auto self = shared_from_this();  // Finish may drop the caller's reference
  Worklist list{this, {}, {}};
  Worklist* const outer = tl_worklist;
  tl_worklist = &list;
  Dispatch(ready, list);
  while (!list.nodes.empty()) {
    const TaggedNode t = list.nodes.front();
    list.nodes.pop_front();
    if (t == list.kept) list.kept = {};
    RunOne(t, ready);
    Dispatch(ready, list);
  }
  tl_worklist = outer;
}

void Executor::Step::RunOne(const TaggedNode& t, std::vector<TaggedNode>& ready) {
  const Graph::Node& node = graph.node(t.id);
  if (aborted) {
    NodeDone(t, nullptr, 0, ready);
    return;
  }
  const int local = lf.local[t.id];
  // A dead node does not run; a _Send does, to carry the deadness to its
  // _Recv on the other side (a Merge is marked dead only when it must not run).
  if (t.state->dead_input[local].load(std::memory_order_acquire) &&
      lf.kind[t.id] != NodeKind::kSend) {
    SkipDead(t, ready);
    return;
  }
  const LoopFrames::Frame& info = t.frame->info;
  Value* const first = t.state->inputs_of(info, local);
  if (exec.builtin_[t.id] != Builtin::kNone && !args.trace && RunBuiltin(t, first, ready)) return;
  // A value input fed by a reference (a variable) reads it now.
  std::vector<Value> in(std::make_move_iterator(first),
                        std::make_move_iterator(first + node.inputs.size()));
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
        NodeDone(t, nullptr, 0, ready);
        return;
      }
      in[k] = Value{std::move(v).value(), nullptr};
    }
  }
  running[t.id].store(true, std::memory_order_relaxed);
  const int64_t start = args.trace ? NowMicros() : 0;
  OpKernel& kernel = *exec.kernels_[t.id];
  if (!kernel.is_async()) {
    OpKernelContext kctx(kernel, *exec.options_.env, ctx, std::move(in), node.output_types);
    if (!blocking || exec.cheap_[t.id] || exec.options_.inline_kernels ||
        !exec.MeasureNow(t.id)) {
      kernel.Compute(kctx);  // no use for its cost (see RunsInline)
    } else {
      const auto began = std::chrono::steady_clock::now();
      kernel.Compute(kctx);
      exec.costs_.Record(t.id, std::chrono::steady_clock::now() - began);
    }
    NodeDone(t, &kctx, start, ready);
    return;
  }
  // Only asynchronous kernels transfer; one inside a loop keys on its
  // frame and iteration (frame_rendezvous.h).
  std::shared_ptr<FramedStep> framed;
  if (t.frame != &root && ctx.rendezvous != nullptr &&
      (node.op() == "_Send" || node.op() == "_Recv")) {
    framed = std::make_shared<FramedStep>(ctx, t.frame->instance_id, t.iter);
  }
  auto kctx = std::make_shared<OpKernelContext>(kernel, *exec.options_.env,
                                                framed ? framed->ctx : ctx, std::move(in),
                                                node.output_types);
  OpKernelContext* raw = kctx.get();
  static_cast<AsyncOpKernel&>(kernel).ComputeAsync(
      *raw, [self = shared_from_this(), t, start, owned = std::move(kctx), framed] {
        std::vector<TaggedNode> later;
        self->NodeDone(t, owned.get(), start, later);
        self->Drain(later);
      });
}

bool Executor::Step::RunBuiltin(const TaggedNode& t, Value* in, std::vector<TaggedNode>& ready) {
  const int num_inputs = static_cast<int>(graph.node(t.id).inputs.size());
  // A reference input (a variable) is read by the kernel path.
  for (int k = 0; k < num_inputs; ++k) {
    if (in[k].is_ref()) return false;
  }
  Value out[2];
  int num_outputs = 1;
  switch (exec.builtin_[t.id]) {
    case Builtin::kNone:
      return false;
    case Builtin::kForward:
      out[0] = std::move(in[0]);
      break;
    case Builtin::kSwitch: {
      const Tensor& pred = in[1].tensor;
      if (pred.dtype() != DType::kBool || pred.rank() != 0) return false;  // the kernel says why
      const int taken = pred.data<bool>()[0] ? 1 : 0;
      out[taken] = std::move(in[0]);
      out[1 - taken] = Value::Dead();
      num_outputs = 2;
      break;
    }
    case Builtin::kMerge: {
      int i = 0;
      while (i < num_inputs && in[i].is_dead) ++i;
      if (i == num_inputs || i >= static_cast<int>(exec.merge_index_.size())) return false;
      out[0] = std::move(in[i]);
      out[1] = Value{exec.merge_index_[i], nullptr};
      num_outputs = 2;
      break;
    }
    case Builtin::kConst:
      out[0] = Value{exec.const_values_[t.id], nullptr};
      break;
  }
  Finished(t, std::span<const Value>(out, num_outputs), false, ready);
  return true;
}

std::vector<Value> Executor::Step::Collect(const TaggedNode& t, OpKernelContext& kctx,
                                           int64_t start) {
  const Graph::Node& node = graph.node(t.id);
  std::vector<Value> outputs;
  Status s = kctx.status();
  if (s.ok()) {
    outputs = std::move(kctx.outputs());
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
  if (!s.ok()) {
    RecordError(s.WithNode(node.name(), node.op()), true);
    outputs.clear();
  }
  running[t.id].store(false, std::memory_order_relaxed);
  if (args.trace) {
    MutexLock lock(mu);
    stats.nodes.push_back({node.name(), node.op(), exec.kernels_[t.id]->node().device, start,
                           NowMicros(), ThisThreadId(), ThisThreadName(), kctx.trace_label()});
  }
  return outputs;
}

void Executor::Step::NodeDone(const TaggedNode& t, OpKernelContext* kctx, int64_t start,
                              std::vector<TaggedNode>& ready, std::vector<Value> outputs,
                              bool dead) {
  if (kctx != nullptr) outputs = Collect(t, *kctx, start);
  Finished(t, outputs, dead, ready);
}

void Executor::Step::Finished(const TaggedNode& t, std::span<const Value> outputs, bool dead,
                              std::vector<TaggedNode>& ready) {
  const Graph::Node& node = graph.node(t.id);
  // A node whose every output is dead (a _Recv of a dead value) is dead to
  // its control consumers too; only they need to know.
  if (!dead && !node.control_consumers.empty() && !outputs.empty()) {
    dead = std::all_of(outputs.begin(), outputs.end(), [](const Value& v) { return v.is_dead; });
  }
  const size_t before = ready.size();
  // After an error nothing more is started: the step ends once what runs has.
  if (!aborted) Propagate(t, outputs, dead, ready);
  const int64_t added = static_cast<int64_t>(ready.size() - before);
  if (outstanding.fetch_add(added - 1, std::memory_order_acq_rel) + added - 1 == 0) Finish();
}

void Executor::Step::SkipDead(const TaggedNode& t, std::vector<TaggedNode>& ready) {
  const Graph::Node& node = graph.node(t.id);
  // A fetch has no value to return (TensorFlow: "Retval does not have value").
  if (lf.kind[t.id] == NodeKind::kRetval) {
    RecordError(errors::InvalidArgument("the fetched tensor '", node.def.inputs.at(0),
                                        "' is dead: it is on the untaken side of a Switch")
                    .WithNode(node.name(), node.op()),
                true);
    NodeDone(t, nullptr, 0, ready);
    return;
  }
  // Most nodes have few outputs: their deadness needs no allocation.
  static const Value kDead[] = {Value::Dead(), Value::Dead(), Value::Dead(), Value::Dead()};
  const size_t n = node.output_types.size();
  if (n <= std::size(kDead)) {
    Finished(t, std::span<const Value>(kDead, n), /*dead=*/true, ready);
    return;
  }
  NodeDone(t, nullptr, 0, ready, std::vector<Value>(n, Value::Dead()), /*dead=*/true);
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
  if (args.loop_stats != nullptr) {
    *args.loop_stats = {.iterations = iterations.load(),
                        .peak_live_iterations = peak_iterations.load(),
                        .peak_live_frames = peak_frames.load()};
  }
  Status final_status;
  StepStats final_stats;
  {
    MutexLock lock(mu);
    final_status = status;
    final_stats = std::move(stats);
  }
  if (final_status.ok()) final_status = CheckFetchesFilled();
  done(final_status, std::move(final_stats));
}

// A step can end with nothing left to run and a fetch never computed: a
// Merge or a loop waiting on an input that never comes leaves the _Retval
// unrun without an error of its own. Returning OK then would hand the
// caller an empty tensor as the fetch's value.
Status Executor::Step::CheckFetchesFilled() const {
  if (args.frame == nullptr) return OkStatus();
  const std::vector<Tensor>& retvals = args.frame->retvals;
  for (size_t i = 0; i < retvals.size(); ++i) {
    if (retvals[i].initialized()) continue;
    for (int id = 0; id < graph.num_nodes(); ++id) {
      const Graph::Node& node = graph.node(id);
      if (lf.kind[id] != NodeKind::kRetval) continue;
      const auto it = node.def.attrs.find("index");
      const int64_t* index = it == node.def.attrs.end() ? nullptr : std::get_if<int64_t>(&it->second);
      if (index == nullptr || *index != static_cast<int64_t>(i)) continue;
      return errors::InvalidArgument("the step ended without computing the fetched tensor '",
                                     node.def.inputs.at(0),
                                     "': a node it depends on never became ready (a Merge or "
                                     "a loop waiting for an input that never came)")
          .WithNode(node.name(), node.op());
    }
    return errors::Internal("the step ended without computing fetch #", i,
                            ": no _Retval node of the step's graph has that index");
  }
  return OkStatus();
}

Executor::Executor(PrivateKey, std::shared_ptr<const Graph> graph, const Options& options)
    : graph_(std::move(graph)),
      options_(options),
      costs_(graph_->num_nodes()),
      unmeasured_runs_(std::make_unique<std::atomic<uint32_t>[]>(graph_->num_nodes())) {}

Executor::~Executor() = default;

StatusOr<std::unique_ptr<Executor>> Executor::Create(std::shared_ptr<const Graph> graph,
                                                     const Options& options) {
  auto e = std::make_unique<Executor>(PrivateKey{}, std::move(graph), options);
  const Graph& g = *e->graph_;
  TFD_ASSIGN_OR_RETURN(e->frames_, LoopFrames::Build(g));
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
    e->cheap_elements_.push_back((*kernel)->cheap_up_to_elements());
    e->kernels_.push_back(std::move(kernel).value());
    e->AddBuiltin(n, device_type == kDeviceCpu);
    if (n.inputs.empty() && n.control_inputs.empty()) e->roots_.push_back(id);
  }
  return e;
}

void Executor::AddBuiltin(const Graph::Node& n, bool on_cpu) {
  Builtin b = Builtin::kNone;
  const std::string& op = n.op();
  if (!on_cpu) {
    // A GPU kernel of the same op may move its result between memories.
  } else if (op == "Identity" || op == "Enter" || op == "Exit" || op == "NextIteration" ||
             op == "LoopCond") {
    b = Builtin::kForward;
  } else if (op == "Switch") {
    b = Builtin::kSwitch;
  } else if (op == "Merge") {
    b = Builtin::kMerge;
    while (merge_index_.size() < n.inputs.size()) {
      merge_index_.push_back(Tensor::Scalar<int32_t>(static_cast<int32_t>(merge_index_.size())));
    }
  } else if (op == "Const") {
    // The kernel was built from this attr, so it is there and of the node's dtype.
    const auto it = n.def.attrs.find("value");
    const Tensor* value = it == n.def.attrs.end() ? nullptr : std::get_if<Tensor>(&it->second);
    if (value != nullptr) {
      const_values_.resize(builtin_.size() + 1);
      const_values_[builtin_.size()] = *value;
      b = Builtin::kConst;
    }
  }
  builtin_.push_back(b);
}

bool Executor::MeasureNow(int id) const {
  if (!costs_.Cheap(id)) return true;
  // Counted per node, so that every cheap kernel is sampled whatever the
  // order nodes run in. A count lost to a race only delays a sample.
  std::atomic<uint32_t>& runs = unmeasured_runs_[id];
  const uint32_t n = runs.load(std::memory_order_relaxed) + 1;
  runs.store(n % kResample, std::memory_order_relaxed);
  return n >= kResample;
}

bool Executor::RunsInline(int id, std::span<const Value> in, bool measured) const {
  if (cheap_[id] || options_.inline_kernels || (measured && costs_.Cheap(id))) return true;
  const int64_t bound = cheap_elements_[id];
  if (bound == 0) return false;
  const std::vector<bool>& refs = graph_->node(id).input_refs;
  int64_t elements = 0;
  for (size_t k = 0; k < in.size(); ++k) {
    if (refs[k] || in[k].is_dead) continue;
    // A value input fed by a variable is read when the node runs: its
    // size is not known yet.
    if (!in[k].tensor.initialized()) return false;
    elements += in[k].tensor.num_elements();
    if (elements > bound) return false;
  }
  return true;
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
  bool asking = args.interrupted != nullptr;
  while (asking && future.wait_for(kInterruptPoll) != std::future_status::ready) {
    if (args.interrupted()) {
      args.cancellation->Cancel(errors::Cancelled("step ", args.step_id, " was interrupted"));
      asking = false;
    }
  }
  auto [status, st] = future.get();
  if (stats != nullptr) *stats = std::move(st);
  return status;
}

bool InlineKernelsFor(int threads) { return threads == 0 && NumAllowedCpus() == 1; }

}  // namespace tfd
