// Where a finished node's outputs go when the graph has while loops: into
// a child frame, the parent frame or the next iteration, and when an
// iteration or a whole frame is done (TensorFlow's executor, frames and
// iterations). See executor_step.h.
#include "daemon/runtime/executor_step.h"

namespace tfd {

// Where a finished node's outputs go: to its consumers in the same iteration,
// or, for the loop ops, into a child frame, the parent frame or the next
// iteration. Then the node no longer counts in its iteration.
void Executor::Step::Propagate(const TaggedNode& t, std::span<const Value> outputs, bool dead,
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

int Executor::Step::Activate(int src, std::span<const Value> outputs, bool dead, Frame* frame,
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
    state->inputs_of(frame->info, l)[c.port] = v;
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
    state->inputs[lf.frames[lf.frame[dst]].input_start[l] + port] = *v;
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
      c->slots.push_back({std::make_unique<Iteration>(lf, info), 0, {}});
      ++slot.outstanding;
      CountFrames(1);
      CountIterations(1, true);
    }
    child = c.get();
  }
  const std::span<const Value> outputs(&v, 1);
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
  const int n = Activate(t.id, {&v, 1}, false, f->parent, f->parent_iter, f->parent_state, ready);
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
  next.outstanding += Activate(t.id, {&v, 1}, false, f, t.iter + 1, next.state.get(), ready);
}

void Executor::Step::StartIteration(Frame* f, std::vector<TaggedNode>& ready) {
  const int64_t iter = ++f->iteration_count;
  std::unique_ptr<Iteration> state;
  if (f->spare.empty()) {
    state = std::make_unique<Iteration>(lf, f->info);
  } else {
    state = std::move(f->spare.back());
    f->spare.pop_back();
    state->Reset(lf, f->info);
  }
  f->slots.push_back({std::move(state), 0, {}});
  CountIterations(1, true);
  f->dead_exits.clear();
  Frame::Slot& s = f->slots.back();
  std::vector<std::pair<int, Value>> deferred = std::move(f->deferred);
  f->deferred.clear();
  for (const auto& [id, v] : deferred) {
    s.outstanding += Activate(id, {&v, 1}, false, f, iter, s.state.get(), ready);
  }
  for (const auto& [id, v] : f->invariants) {
    s.outstanding += Activate(id, {&v, 1}, v.is_dead, f, iter, s.state.get(), ready);
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
    f->spare.push_back(std::move(f->slots.front().state));
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

}  // namespace tfd
