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

namespace exec_state {

// One iteration of one frame (the root frame has only iteration 0): the
// pending input counts, inputs and deadness of the frame's nodes in it, by
// local index (LoopFrames::local). Updated without locks, each input slot
// written once by its producer, but for a Merge's state, which changes
// under merge_mu (a Merge runs on its first live input, so later arrivals
// must see that it ran).
struct Iteration {
  Iteration(const LoopFrames& lf, const LoopFrames::Frame& f, const Graph& g)
      : pending(f.num_nodes), inputs(f.num_nodes), dead_input(f.num_nodes) {
    for (int l = 0; l < f.num_nodes; ++l) {
      pending[l].store(f.initial_pending[l], std::memory_order_relaxed);
      const int id = f.ids[l];
      const size_t n = g.node(id).inputs.size();
      if (lf.kind[id] == NodeKind::kMerge) {
        inputs[l].assign(n, Value::Dead());  // what has not arrived when it runs
      } else {
        inputs[l].resize(n);
      }
    }
  }
  std::vector<std::atomic<int>> pending;
  std::vector<std::vector<Value>> inputs;
  std::vector<std::atomic<bool>> dead_input;  // a dead value or a dead node's control edge arrived
  Mutex merge_mu;
  std::vector<int> merge_dead GUARDED_BY(merge_mu);  // dead data inputs per Merge, by local index
};

// One instance of a frame: the root frame, or a loop entered in one
// iteration of its parent. Owned by the parent's iteration (Slot::children),
// or by the step for the root; deleted once no Enter is left to deliver and
// every iteration is gone (Executor::Step::DeleteFrame).
struct Frame {
  // An iteration alive in the frame, with the bookkeeping that decides when
  // it is done: nodes ready or running in it, plus child frames alive.
  struct Slot {
    std::unique_ptr<Iteration> state;
    int outstanding = 0;
    std::map<int, std::unique_ptr<Frame>> children;  // by static frame
  };
  Frame(int static_id, const LoopFrames::Frame& i, Frame* p, int64_t p_iter, Iteration* p_state)
      : id(static_id), info(i), parent(p), parent_iter(p_iter), parent_state(p_state) {}

  Slot& slot(int64_t iter) REQUIRES(mu) { return slots[iter - first_iter]; }

  const int id;
  const LoopFrames::Frame& info;
  Frame* const parent;           // null for the root
  const int64_t parent_iter;
  Iteration* const parent_state;  // alive while this frame is
  Mutex mu;
  std::deque<Slot> slots GUARDED_BY(mu);  // iterations first_iter, first_iter + 1, ...
  int64_t first_iter GUARDED_BY(mu) = 0;
  int64_t iteration_count GUARDED_BY(mu) = 0;  // the newest iteration started
  int pending_enters GUARDED_BY(mu) = 0;
  // Values of is_constant Enters (by node id), given to every iteration.
  std::vector<std::pair<int, Value>> invariants GUARDED_BY(mu);
  // NextIteration values (by node id) waiting for an iteration to end, when
  // parallel_iterations are alive.
  std::vector<std::pair<int, Value>> deferred GUARDED_BY(mu);
  // Exits dead in the newest iteration: dead to the parent if the frame
  // ends with them (a loop on the untaken side of a cond).
  std::vector<int> dead_exits GUARDED_BY(mu);
};

// A node to run in one iteration of one frame.
struct TaggedNode {
  int id = -1;
  Frame* frame = nullptr;
  int64_t iter = 0;
  Iteration* state = nullptr;
  bool operator==(const TaggedNode& o) const { return id == o.id && state == o.state; }
};

}  // namespace exec_state

using exec_state::Frame;
using exec_state::Iteration;
using exec_state::TaggedNode;

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
//
// The step ends when no node is ready or running (`outstanding`). Frames'
// bookkeeping (loop_frames.h) follows TensorFlow's executor: a node made
// ready counts in its iteration's Slot::outstanding until it has delivered
// its outputs; an iteration is done when that count is 0, the iteration
// before it is gone, and (for iteration 0) every Enter has delivered.
struct Executor::Step : std::enable_shared_from_this<Executor::Step> {
  Step(const Executor& e, const RunArgs& a, DoneCallback d)
      : exec(e),
        graph(*e.graph_),
        lf(e.frames_),
        args(a),
        done(std::move(d)),
        running(graph.num_nodes()),
        root(0, lf.frames[0], nullptr, 0, nullptr) {
    ctx.step_id = a.step_id;
    ctx.cancellation = a.cancellation;
    ctx.deadline = a.deadline;
    ctx.frame = a.frame;
    ctx.rendezvous = a.rendezvous;
    ctx.trace = a.trace;
    ctx.master = exec.options_.master;
    ctx.session = exec.options_.session;
    MutexLock lock(root.mu);
    root.slots.push_back({std::make_unique<Iteration>(lf, lf.frames[0], graph), 0, {}});
    root_state = root.slots.front().state.get();
  }

  void Start();
  // Runs `ready` and whatever they make ready on this thread, as the rules
  // above allow.
  void Drain(std::vector<TaggedNode>& ready);
  // Sorts newly ready nodes: cheap ones (and, on a pool thread with nothing
  // else to do, one expensive one) onto `list`, the rest to the pool.
  void Dispatch(std::vector<TaggedNode>& ready, Worklist& list);
  void Post(const TaggedNode& t);
  void RunOne(const TaggedNode& t, std::vector<TaggedNode>& ready);
  // Skips dead node `t`: every output dead, control consumers told.
  void SkipDead(const TaggedNode& t, std::vector<TaggedNode>& ready);
  void NodeDone(const TaggedNode& t, OpKernelContext* kctx, int64_t start,
                std::vector<TaggedNode>& ready, std::vector<Value> outputs = {}, bool dead = false);
  // Checks what kernel `t` produced; the outputs when it succeeded, else
  // empty (the error recorded).
  std::vector<Value> Collect(const TaggedNode& t, OpKernelContext& kctx, int64_t start);

  // Frames (executor_frames part below).
  void Propagate(const TaggedNode& t, const std::vector<Value>& outputs, bool dead,
                 std::vector<TaggedNode>& ready);
  // Delivers node `src`'s outputs to its consumers in iteration `iter` of
  // `frame`; returns how many it made ready (pushed onto `ready`).
  int Activate(int src, const std::vector<Value>& outputs, bool dead, Frame* frame, int64_t iter,
               Iteration* state, std::vector<TaggedNode>& ready);
  bool DeliverToMerge(int src, int dst, int port, const Value* v, Iteration* state);
  void EnterChild(const TaggedNode& t, const Value& v, std::vector<TaggedNode>& ready);
  void LeaveFrame(const TaggedNode& t, const Value& v, std::vector<TaggedNode>& ready);
  void NextIteration(const TaggedNode& t, const Value& v, std::vector<TaggedNode>& ready);
  void AddOutstanding(Frame* f, int64_t iter, int delta, std::vector<TaggedNode>& ready);
  void StartIteration(Frame* f, std::vector<TaggedNode>& ready) REQUIRES(f->mu);
  // Deletes the iterations of `f` from `iter` on that are done; whether
  // the frame is then done.
  bool CleanupIterations(Frame* f, int64_t iter, std::vector<TaggedNode>& ready) REQUIRES(f->mu);
  void DeleteFrame(Frame* f, std::vector<TaggedNode>& ready);
  void CountIterations(int64_t delta, bool started);
  void CountFrames(int64_t delta);

  void RecordError(const Status& s, bool from_kernel);
  void Finish();

  const Executor& exec;
  const Graph& graph;
  const LoopFrames& lf;
  RunArgs args;
  DoneCallback done;
  // Started by a blocking Run: kernels measured cheap run inline too.
  bool blocking = false;
  StepContext ctx;
  std::vector<std::atomic<int>> running;  // by node id: runs in progress, for the deadline's message
  std::atomic<int64_t> outstanding{0};    // nodes ready or running
  std::atomic<bool> aborted{false};
  std::optional<CancellationManager::Token> cancel_token;
  std::optional<StepDeadlines::Id> deadline;
  Frame root;
  Iteration* root_state = nullptr;
  std::atomic<int64_t> iterations{0}, live_iterations{0}, peak_iterations{0};
  std::atomic<int64_t> live_frames{0}, peak_frames{0};

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
        if (self->running[id].load() == 0) continue;
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
    if (exec.RunsInline(t.id, blocking)) {
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
  // A value input fed by a reference (a variable) reads it now.
  std::vector<Value> in = std::move(t.state->inputs[local]);
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
  running[t.id].fetch_add(1, std::memory_order_relaxed);
  const int64_t start = args.trace ? NowMicros() : 0;
  OpKernel& kernel = *exec.kernels_[t.id];
  if (!kernel.is_async()) {
    OpKernelContext kctx(kernel, *exec.options_.env, ctx, std::move(in), node.output_types);
    if (!blocking || exec.cheap_[t.id] || exec.options_.inline_kernels) {
      kernel.Compute(kctx);  // no use for its cost (see RunsInline)
    } else {
      const auto began = std::chrono::steady_clock::now();
      kernel.Compute(kctx);
      exec.costs_.Record(t.id, std::chrono::steady_clock::now() - began);
    }
    NodeDone(t, &kctx, start, ready);
    return;
  }
  auto kctx = std::make_shared<OpKernelContext>(kernel, *exec.options_.env, ctx, std::move(in),
                                                node.output_types);
  OpKernelContext* raw = kctx.get();
  static_cast<AsyncOpKernel&>(kernel).ComputeAsync(
      *raw, [self = shared_from_this(), t, start, owned = std::move(kctx)] {
        std::vector<TaggedNode> later;
        self->NodeDone(t, owned.get(), start, later);
        self->Drain(later);
      });
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
  running[t.id].fetch_sub(1, std::memory_order_relaxed);
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
  const Graph::Node& node = graph.node(t.id);
  if (kctx != nullptr) outputs = Collect(t, *kctx, start);
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
  std::vector<Value> outputs(node.output_types.size(), Value::Dead());
  NodeDone(t, nullptr, 0, ready, std::move(outputs), /*dead=*/true);
}

// Where a finished node's outputs go: to its consumers in the same iteration,
// or, for the loop ops, into a child frame, the parent frame or the next
// iteration. Then the node no longer counts in its iteration.
void Executor::Step::Propagate(const TaggedNode& t, const std::vector<Value>& outputs, bool dead,
                               std::vector<TaggedNode>& ready) {
  const NodeKind kind = lf.kind[t.id];
  if (kind != NodeKind::kEnter && kind != NodeKind::kExit && kind != NodeKind::kNextIteration) {
    const int n = Activate(t.id, outputs, dead, t.frame, t.iter, t.state, ready);
    AddOutstanding(t.frame, t.iter, n - 1, ready);
    return;
  }
  const Value v = outputs.empty() ? Value::Dead() : outputs[0];
  if (kind == NodeKind::kEnter) EnterChild(t, v, ready);
  if (kind == NodeKind::kExit) LeaveFrame(t, v, ready);
  if (kind == NodeKind::kNextIteration) NextIteration(t, v, ready);
  AddOutstanding(t.frame, t.iter, -1, ready);
}

int Executor::Step::Activate(int src, const std::vector<Value>& outputs, bool dead, Frame* frame,
                             int64_t iter, Iteration* state, std::vector<TaggedNode>& ready) {
  const Graph::Node& node = graph.node(src);
  const size_t before = ready.size();
  for (const Graph::Edge& c : node.consumers) {
    const Value& v = outputs[graph.node(c.node).inputs[c.port].port];
    const int l = lf.local[c.node];
    if (lf.kind[c.node] == NodeKind::kMerge) {
      if (DeliverToMerge(src, c.node, c.port, &v, state)) ready.push_back({c.node, frame, iter, state});
      continue;
    }
    state->inputs[l][c.port] = v;
    // Before the pending count drops below, so the consumer sees it.
    if (v.is_dead) state->dead_input[l].store(true, std::memory_order_relaxed);
    if (state->pending[l].fetch_sub(1, std::memory_order_acq_rel) == 1) {
      ready.push_back({c.node, frame, iter, state});
    }
  }
  for (int c : node.control_consumers) {
    if (lf.kind[c] == NodeKind::kMerge) {
      if (DeliverToMerge(src, c, -1, nullptr, state)) ready.push_back({c, frame, iter, state});
      continue;
    }
    const int l = lf.local[c];
    if (dead) state->dead_input[l].store(true, std::memory_order_relaxed);
    if (state->pending[l].fetch_sub(1, std::memory_order_acq_rel) == 1) {
      ready.push_back({c, frame, iter, state});
    }
  }
  return static_cast<int>(ready.size() - before);
}

// A Merge's pending count is 2 per control input not yet arrived, plus 1
// until a live data input has: it runs on the first live input once its
// control inputs are in (later inputs are ignored), or, dead, when every
// data input is dead, or a dead Enter's is (a loop on the untaken side of a
// cond: the back edge will never bring anything).
bool Executor::Step::DeliverToMerge(int src, int dst, int port, const Value* v, Iteration* state) {
  const int l = lf.local[dst];
  const int num_data = static_cast<int>(graph.node(dst).inputs.size());
  MutexLock lock(state->merge_mu);
  std::atomic<int>& pending = state->pending[l];
  int p = pending.load(std::memory_order_relaxed);
  if (v != nullptr && !v->is_dead) {
    if ((p & 1) == 0) return false;  // a live input (or all dead ones) came first
    state->inputs[l][port] = *v;
    pending.store(p - 1, std::memory_order_relaxed);
    return p - 1 == 0;
  }
  if (v == nullptr) {
    p -= 2;
    pending.store(p, std::memory_order_relaxed);
    if (p == 0) return true;  // its live input came earlier
  } else {
    if (state->merge_dead.empty()) state->merge_dead.resize(state->pending.size());
    state->merge_dead[l] = lf.kind[src] == NodeKind::kEnter ? num_data : state->merge_dead[l] + 1;
  }
  if (p != 1 || state->merge_dead.empty() || state->merge_dead[l] < num_data) return false;
  state->dead_input[l].store(true, std::memory_order_relaxed);
  pending.store(-1, std::memory_order_relaxed);  // fired: nothing later makes it ready again
  return true;
}

// An Enter delivers into iteration 0 of its child frame (made on the first
// Enter for this parent iteration), or, is_constant, into every iteration.
void Executor::Step::EnterChild(const TaggedNode& t, const Value& v,
                                std::vector<TaggedNode>& ready) {
  const int child_id = lf.child[t.id];
  Frame* child = nullptr;
  {
    MutexLock lock(t.frame->mu);
    Frame::Slot& slot = t.frame->slot(t.iter);
    std::unique_ptr<Frame>& c = slot.children[child_id];
    if (!c) {
      const LoopFrames::Frame& info = lf.frames[child_id];
      c = std::make_unique<Frame>(child_id, info, t.frame, t.iter, t.state);
      MutexLock child_lock(c->mu);
      c->pending_enters = info.num_enters;
      c->slots.push_back({std::make_unique<Iteration>(lf, info, graph), 0, {}});
      ++slot.outstanding;
      CountFrames(1);
      CountIterations(1, true);
    }
    child = c.get();
  }
  const std::vector<Value> outputs{v};
  bool frame_done = false;
  {
    MutexLock lock(child->mu);
    if (lf.constant[t.id]) {
      child->invariants.push_back({t.id, v});
      for (int64_t i = child->first_iter; i <= child->iteration_count; ++i) {
        Frame::Slot& s = child->slot(i);
        s.outstanding += Activate(t.id, outputs, v.is_dead, child, i, s.state.get(), ready);
      }
    } else {
      Frame::Slot& s = child->slot(0);  // iteration 0 stays until every Enter has delivered
      s.outstanding += Activate(t.id, outputs, v.is_dead, child, 0, s.state.get(), ready);
    }
    --child->pending_enters;
    frame_done = CleanupIterations(child, child->first_iter, ready);
  }
  if (frame_done) DeleteFrame(child, ready);
}

// A live Exit delivers into the parent frame; a dead one (the loop went on)
// is remembered only while its iteration is the newest, for DeleteFrame.
void Executor::Step::LeaveFrame(const TaggedNode& t, const Value& v,
                                std::vector<TaggedNode>& ready) {
  Frame* f = t.frame;
  if (v.is_dead) {
    MutexLock lock(f->mu);
    if (t.iter == f->iteration_count) f->dead_exits.push_back(t.id);
    return;
  }
  const int n = Activate(t.id, {v}, false, f->parent, f->parent_iter, f->parent_state, ready);
  AddOutstanding(f->parent, f->parent_iter, n, ready);
}

// A live NextIteration delivers into the next iteration, starting it unless
// parallel_iterations are alive (then it waits in `deferred` for one to
// end); a dead one ends the loop's thread of values.
void Executor::Step::NextIteration(const TaggedNode& t, const Value& v,
                                   std::vector<TaggedNode>& ready) {
  if (v.is_dead) return;
  Frame* f = t.frame;
  MutexLock lock(f->mu);
  if (t.iter == f->iteration_count) {
    if (static_cast<int>(f->slots.size()) >= f->info.parallel_iterations) {
      f->deferred.push_back({t.id, v});
      return;
    }
    StartIteration(f, ready);
  }
  Frame::Slot& next = f->slot(t.iter + 1);
  next.outstanding += Activate(t.id, {v}, false, f, t.iter + 1, next.state.get(), ready);
}

void Executor::Step::StartIteration(Frame* f, std::vector<TaggedNode>& ready) {
  const int64_t iter = ++f->iteration_count;
  f->slots.push_back({std::make_unique<Iteration>(lf, f->info, graph), 0, {}});
  CountIterations(1, true);
  f->dead_exits.clear();
  Frame::Slot& s = f->slots.back();
  std::vector<std::pair<int, Value>> deferred = std::move(f->deferred);
  f->deferred.clear();
  for (const auto& [id, v] : deferred) {
    s.outstanding += Activate(id, {v}, false, f, iter, s.state.get(), ready);
  }
  for (const auto& [id, v] : f->invariants) {
    s.outstanding += Activate(id, {v}, v.is_dead, f, iter, s.state.get(), ready);
  }
}

void Executor::Step::AddOutstanding(Frame* f, int64_t iter, int delta,
                                    std::vector<TaggedNode>& ready) {
  if (f == &root || delta == 0) return;  // the root frame ends with the step
  bool frame_done = false;
  {
    MutexLock lock(f->mu);
    Frame::Slot& s = f->slot(iter);
    s.outstanding += delta;
    if (s.outstanding != 0) return;
    frame_done = CleanupIterations(f, iter, ready);
  }
  if (frame_done) DeleteFrame(f, ready);
}

bool Executor::Step::CleanupIterations(Frame* f, int64_t iter, std::vector<TaggedNode>& ready) {
  while (!f->slots.empty() && iter == f->first_iter && f->pending_enters == 0 &&
         f->slots.front().outstanding == 0) {
    f->slots.pop_front();
    ++f->first_iter;
    ++iter;
    CountIterations(-1, false);
    if (!f->deferred.empty()) StartIteration(f, ready);
  }
  return f->slots.empty() && f->pending_enters == 0;
}

// Frame `f` is done: no node of it can run any more. Its dead Exits
// (a loop that never ran, in a dead branch) deliver their deadness to the
// parent, and it leaves its parent's iteration, which may end with it.
void Executor::Step::DeleteFrame(Frame* f, std::vector<TaggedNode>& ready) {
  Frame* parent = f->parent;
  const int64_t parent_iter = f->parent_iter;
  std::vector<int> dead_exits;
  {
    MutexLock lock(f->mu);
    dead_exits = std::move(f->dead_exits);
  }
  int n = 0;
  for (int id : dead_exits) {
    const std::vector<Value> dead(graph.node(id).output_types.size(), Value::Dead());
    n += Activate(id, dead, true, parent, parent_iter, f->parent_state, ready);
  }
  CountFrames(-1);
  bool parent_done = false;
  {
    MutexLock lock(parent->mu);
    Frame::Slot& s = parent->slot(parent_iter);
    s.children.erase(f->id);  // `f` is gone
    if (parent == &root) return;
    s.outstanding += n - 1;
    if (s.outstanding != 0) return;
    parent_done = CleanupIterations(parent, parent_iter, ready);
  }
  if (parent_done) DeleteFrame(parent, ready);
}

void Executor::Step::CountIterations(int64_t delta, bool started) {
  if (started) iterations.fetch_add(1, std::memory_order_relaxed);
  const int64_t live = live_iterations.fetch_add(delta, std::memory_order_relaxed) + delta;
  int64_t peak = peak_iterations.load(std::memory_order_relaxed);
  while (live > peak && !peak_iterations.compare_exchange_weak(peak, live)) {
  }
}

void Executor::Step::CountFrames(int64_t delta) {
  const int64_t live = live_frames.fetch_add(delta, std::memory_order_relaxed) + delta;
  int64_t peak = peak_frames.load(std::memory_order_relaxed);
  while (live > peak && !peak_frames.compare_exchange_weak(peak, live)) {
  }
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
  done(final_status, std::move(final_stats));
}

Executor::Executor(PrivateKey, std::shared_ptr<const Graph> graph, const Options& options)
    : graph_(std::move(graph)), options_(options), costs_(graph_->num_nodes()) {}

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
