// The state of one step of an Executor (executor.h), shared by executor.cc
// (running nodes) and executor_frames.cc (where their outputs go: frames
// and iterations of while loops, loop_frames.h). Private to those two files.
#pragma once

#include <algorithm>
#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "daemon/runtime/executor.h"
#include "daemon/runtime/frame_rendezvous.h"
#include "daemon/runtime/loop_frames.h"
#include "daemon/runtime/step_deadlines.h"

namespace tfd {

namespace exec_state {

// One iteration of one frame (the root frame has only iteration 0): the
// pending input counts, inputs and deadness of the frame's nodes in it, by
// local index (LoopFrames::local), the inputs in one array for all nodes
// (LoopFrames::Frame::input_start). Updated without locks, each input slot
// written once by its producer, but for a Merge's state, which changes
// under merge_mu (a Merge runs on its first live input, so later arrivals
// must see that it ran). A frame keeps the states of ended iterations and
// Resets them for new ones (Frame::spare), so that a loop allocates no
// state per iteration once parallel_iterations of them have run.
struct Iteration {
  Iteration(const LoopFrames& lf, const LoopFrames::Frame& f)
      : pending(f.num_nodes), inputs(f.input_start.back()), dead_input(f.num_nodes) {
    Reset(lf, f);
  }
  // As new: no input arrived. Only while no node of the iteration can run.
  void Reset(const LoopFrames& lf, const LoopFrames::Frame& f) {
    for (int l = 0; l < f.num_nodes; ++l) {
      pending[l].store(f.initial_pending[l], std::memory_order_relaxed);
      dead_input[l].store(false, std::memory_order_relaxed);
      // A Merge's inputs that have not arrived when it runs are dead.
      const Value blank = lf.kind[f.ids[l]] == NodeKind::kMerge ? Value::Dead() : Value{};
      for (int k = f.input_start[l]; k < f.input_start[l + 1]; ++k) inputs[k] = blank;
    }
    MutexLock lock(merge_mu);
    std::fill(merge_dead.begin(), merge_dead.end(), 0);
  }
  // The data inputs of the node of local index `l`.
  Value* inputs_of(const LoopFrames::Frame& f, int l) { return &inputs[f.input_start[l]]; }

  std::vector<std::atomic<int>> pending;
  std::vector<Value> inputs;
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
      : id(static_id),
        info(i),
        parent(p),
        parent_iter(p_iter),
        parent_state(p_state),
        instance_id(p == nullptr ? 0 : FrameInstanceId(p->instance_id, p_iter, i.name)) {}

  Slot& slot(int64_t iter) REQUIRES(mu) { return slots[iter - first_iter]; }

  const int id;
  const LoopFrames::Frame& info;
  Frame* const parent;           // null for the root
  const int64_t parent_iter;
  Iteration* const parent_state;  // alive while this frame is
  const uint64_t instance_id;     // FrameInstanceId (transfers key on it); 0: root
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
  // States of ended iterations, for new ones (Iteration::Reset).
  std::vector<std::unique_ptr<Iteration>> spare GUARDED_BY(mu);
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

struct Worklist;  // executor.cc

// The state of one running step. Shared by the callbacks that drive it;
// destroyed when the last of them lets go, after `done` has run.
//
// Where nodes run: a cheap kernel (OpKernel::is_cheap, every asynchronous
// kernel, whose ComputeAsync only registers a callback, a kernel given
// inputs within its OpKernel::cheap_up_to_elements, and in a step of a
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
    root.slots.push_back({std::make_unique<Iteration>(lf, lf.frames[0]), 0, {}});
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
  // Hands node `t`'s outputs on and ends its count in the step.
  void Finished(const TaggedNode& t, std::span<const Value> outputs, bool dead,
                std::vector<TaggedNode>& ready);
  // Runs node `t`, of a kind the executor computes itself (Executor::Builtin),
  // on its inputs `in`; false, having changed nothing, when its kernel must
  // run instead (to report bad input, say).
  bool RunBuiltin(const TaggedNode& t, Value* in, std::vector<TaggedNode>& ready);
  // Checks what kernel `t` produced; the outputs when it succeeded, else
  // empty (the error recorded).
  std::vector<Value> Collect(const TaggedNode& t, OpKernelContext& kctx, int64_t start);

  // Frames and iterations (executor_frames.cc). Propagate hands a finished
  // node's outputs on and ends its count in its iteration.
  void Propagate(const TaggedNode& t, std::span<const Value> outputs, bool dead,
                 std::vector<TaggedNode>& ready);
  // Delivers node `src`'s outputs to its consumers in iteration `iter` of
  // `frame`; returns how many it made ready (pushed onto `ready`).
  int Activate(int src, std::span<const Value> outputs, bool dead, Frame* frame, int64_t iter,
               Iteration* state, std::vector<TaggedNode>& ready);
  // Delivers value `v` (null: a control edge) from `src` to input `port` of
  // Merge `dst`; whether that makes it ready.
  bool DeliverToMerge(int src, int dst, int port, const Value* v, Iteration* state);
  void EnterChild(const TaggedNode& t, const Value& v, std::vector<TaggedNode>& ready);
  void LeaveFrame(const TaggedNode& t, const Value& v, std::vector<TaggedNode>& ready);
  void NextIteration(const TaggedNode& t, const Value& v, std::vector<TaggedNode>& ready);
  // Adds `delta` to iteration `iter`'s count of f (nothing for the root),
  // cleaning up what that count reaching 0 ends.
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
  // OK, or INVALID_ARGUMENT naming a fetch the step ended without computing.
  Status CheckFetchesFilled() const;

  const Executor& exec;
  const Graph& graph;
  const LoopFrames& lf;
  RunArgs args;
  DoneCallback done;
  // Started by a blocking Run: kernels measured cheap run inline too.
  bool blocking = false;
  StepContext ctx;
  // By node id: started and not finished, for the deadline's message (a
  // plain flag, as cheap as can be: a loop's node running in two iterations
  // at once may be left out of the message).
  std::vector<std::atomic<bool>> running;
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

}  // namespace tfd
