#include "kernels/control/while_grad.h"

#include <deque>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "kernels/control/cond_guards.h"

namespace tfd::kernels {
namespace {

using GradMap = GradientMap;

class LoopGradient;

// The innermost loop whose body's gradient this thread is building: a loop
// reached there is nested in it.
thread_local LoopGradient* tl_enclosing = nullptr;

std::string Where(const NodeDef& n) { return "node '" + n.name + "' (" + n.op + ")"; }

// One loop variable's nodes, as ops::WhileLoop builds them.
struct LoopVar {
  int enter = -1, merge = -1, sw = -1, exit = -1, identity = -1, next = -1;
};

// A loop seen from one of its Exits.
struct Loop {
  std::string frame;
  int64_t parallel_iterations = 10;
  Output loop_cond;
  std::vector<LoopVar> vars;    // by the Enters' ids
  std::vector<int> invariants;  // Enters and RefEnters with is_constant
  std::vector<bool> in_frame;   // by node id: runs in the loop (its Enters too)
};

// The graph's nodes as the loop's analysis needs them.
class View {
 public:
  View(const Scope& s, int n) : s_(s), n_(n), consumers_(n) {
    for (int id = 0; id < n; ++id) {
      for (const std::string& in : s.node(id).inputs) {
        auto ref = ParseInput(in);
        if (!ref.ok()) continue;
        const int src = s.FindNode(ref->node);
        if (src >= 0 && src < n) consumers_[src].push_back({id, ref->control ? -1 : ref->port});
      }
    }
  }
  const NodeDef& node(int id) const { return s_.node(id); }
  // The producer of data input k of `id` and its port; {-1, 0} when none.
  std::pair<int, int> Input(int id, size_t k) const {
    const NodeDef& n = node(id);
    if (k >= n.inputs.size()) return {-1, 0};
    auto ref = ParseInput(n.inputs[k]);
    if (!ref.ok() || ref->control) return {-1, 0};
    return {s_.FindNode(ref->node), ref->port};
  }
  Output OutputOf(std::pair<int, int> key) const {
    return s_.OutputOf(node(key.first).name, key.second);
  }
  // The consumer of output `port` of `id` whose op is `op`; -1 when none.
  int Consumer(int id, int port, const std::string& op) const {
    for (const auto& [c, p] : consumers_[id]) {
      if (p == port && node(c).op == op) return c;
    }
    return -1;
  }
  const std::vector<std::pair<int, int>>& consumers(int id) const { return consumers_[id]; }
  int size() const { return n_; }

 private:
  const Scope& s_;
  const int n_;
  std::vector<std::vector<std::pair<int, int>>> consumers_;  // {consumer, port; -1: control}
};

template <typename T>
T AttrOr(const NodeDef& n, const std::string& name, T fallback) {
  auto it = n.attrs.find(name);
  if (it == n.attrs.end()) return fallback;
  if (const T* v = std::get_if<T>(&it->second)) return *v;
  return fallback;
}

Status NotALoop(const NodeDef& n, const std::string& what) {
  return errors::InvalidArgument("the gradient of the while loop around ", Where(n),
                                 " needs the structure ops::WhileLoop builds: ", what);
}

// The loop variable entered by Enter `enter`.
StatusOr<LoopVar> FindVar(const View& v, int enter) {
  LoopVar lv;
  lv.enter = enter;
  lv.merge = v.Consumer(enter, 0, "Merge");
  if (lv.merge < 0) return NotALoop(v.node(enter), "its Enter feeds no Merge");
  lv.sw = v.Consumer(lv.merge, 0, "Switch");
  lv.next = v.Input(lv.merge, 1).first;
  if (lv.sw < 0 || lv.next < 0 || v.node(lv.next).op != "NextIteration") {
    return NotALoop(v.node(lv.merge), "no Switch after it, or no NextIteration into it");
  }
  lv.exit = v.Consumer(lv.sw, 0, "Exit");
  lv.identity = v.Consumer(lv.sw, 1, "Identity");
  if (lv.exit < 0 || lv.identity < 0) {
    return NotALoop(v.node(lv.sw), "no Exit and Identity after the Switch");
  }
  return lv;
}

bool IsEnter(const NodeDef& n) { return n.op == "Enter" || n.op == "RefEnter"; }

// The nodes that run in the loop, its nested loops' included: reached from
// its Enters without leaving through one of its own Exits. `depth` counts the
// nested frames a node's output is in: an Enter goes one deeper, an Exit one
// out.
std::vector<bool> FrameNodes(const View& v, const std::vector<int>& enters) {
  std::vector<bool> in(v.size());
  std::deque<std::pair<int, int>> work;  // {node, depth of its producer's output}
  for (int e : enters) work.push_back({e, -1});
  while (!work.empty()) {
    auto [id, depth] = work.front();
    work.pop_front();
    if (in[id]) continue;
    const NodeDef& n = v.node(id);
    if (IsEnter(n)) {
      ++depth;
    } else if (n.op == "Exit") {
      if (depth == 0) continue;  // this loop's own Exit
      --depth;
    }
    in[id] = true;
    for (const auto& c : v.consumers(id)) work.push_back({c.first, depth});
  }
  return in;
}

StatusOr<Loop> Analyze(const View& v, int exit_id) {
  const int sw = v.Input(exit_id, 0).first;
  const int merge = sw < 0 ? -1 : v.Input(sw, 0).first;
  const int enter = merge < 0 ? -1 : v.Input(merge, 0).first;
  if (enter < 0 || v.node(sw).op != "Switch" || v.node(merge).op != "Merge" ||
      v.node(enter).op != "Enter") {
    return NotALoop(v.node(exit_id), "no Switch, Merge and Enter before the Exit");
  }
  Loop loop;
  loop.frame = AttrOr<std::string>(v.node(enter), "frame_name", "");
  loop.parallel_iterations = AttrOr<int64_t>(v.node(enter), "parallel_iterations", 10);
  loop.loop_cond = v.OutputOf(v.Input(sw, 1));
  std::vector<int> enters;
  for (int id = 0; id < v.size(); ++id) {
    const NodeDef& n = v.node(id);
    if (!IsEnter(n) || AttrOr<std::string>(n, "frame_name", "") != loop.frame) continue;
    enters.push_back(id);
    if (AttrOr<bool>(n, "is_constant", false)) {
      loop.invariants.push_back(id);  // a RefEnter's too: an array the body reads or writes
    } else if (n.op == "RefEnter") {
      return NotALoop(n, "a reference enters only as a loop invariant");
    } else {
      TFD_ASSIGN_OR_RETURN(LoopVar lv, FindVar(v, id));
      loop.vars.push_back(lv);
    }
  }
  loop.in_frame = FrameNodes(v, enters);
  return loop;
}

bool Floating(const Output& o) { return IsFloating(o.dtype); }

Output IntConst(const Scope& s, int32_t v) {
  return s
      .AddOperation("Const", {}, {{"value", Tensor::Scalar<int32_t>(v)}, {"dtype", DType::kInt32}})
      .output(0);
}

AttrMap FrameAttrs(const std::string& frame, int64_t parallel, bool constant) {
  return {{"frame_name", frame}, {"parallel_iterations", parallel}, {"is_constant", constant}};
}

// One loop built by hand (for the forward counter and the gradient loop):
// Enter -> Merge -> Switch -> Exit / Identity per variable.
struct Header {
  std::vector<Output> merges, exits, identities;
};

// `cond_of` gives the LoopCond from the first variable's Merge; the Enters
// wait on `enter_after` too.
Header AddHeader(const Scope& s, const std::vector<Output>& init, const std::string& frame,
                 int64_t parallel, const std::function<Output(const Output&)>& cond_of,
                 const std::vector<Output>& enter_after = {}) {
  Header h;
  for (const Output& x : init) {
    Output e = s.WithControlDependencies(enter_after)
                   .AddOperation("Enter", {x}, FrameAttrs(frame, parallel, false))
                   .output(0);
    h.merges.push_back(s.AddOperation("Merge", {e, e}).output(0));
  }
  if (!s.ok()) return h;
  const Output cond = cond_of(h.merges[0]);
  for (const Output& m : h.merges) {
    Operation sw = s.AddOperation("Switch", {m, cond});
    h.exits.push_back(s.AddOperation("Exit", {sw.output(0)}).output(0));
    h.identities.push_back(s.AddOperation("Identity", {sw.output(1)}).output(0));
  }
  return h;
}

// Closes the back edges of a loop from AddHeader: Merge i takes `next[i]`
// through a NextIteration; the first NextIteration waits on `after` too.
void CloseLoop(const Scope& s, const Header& h, const std::vector<Output>& next,
               const std::vector<Output>& after) {
  for (size_t i = 0; i < next.size() && s.ok(); ++i) {
    const Scope ns = i == 0 ? s.WithControlDependencies(after) : s;
    s.UpdateInput(h.merges[i].node, 1, ns.AddOperation("NextIteration", {next[i]}).output(0));
  }
}

// What a loop's counter waits on before its next iteration: `done` itself,
// and for `maybe` (pushes or pops on a cond's side, dead in the iterations
// that did not take it) a Merge of `live` that waits on them. A dead control
// input makes a node dead, but not a Merge: it runs on its live data input
// once its control inputs are in, dead or not.
std::vector<Output> WaitOn(const Scope& s, const std::vector<Output>& done,
                           const std::vector<Output>& maybe, const Output& live) {
  std::vector<Output> all = done;
  if (!maybe.empty()) {
    const Scope sync = s.WithOpName("sync").WithControlDependencies(maybe);
    all.push_back(sync.AddOperation("Merge", {live}).output(0));
  }
  return all;
}

// Builds one loop's gradient; see AddWhileLoopGradient.
//
// A loop nested in another's body (`outer`) is differentiated while the
// outer loop's body gradient is built, so its gradient loop runs inside the
// outer gradient loop, once per outer iteration, as in TF1. What it adds to
// the forward graph (its counter, its stacks and their pushes) runs in the
// outer forward loop; the outer gradient leaves those nodes alone
// (NoteForward) and brings what the inner gradient reads from the outer
// forward loop (each inner trip count, the outer loop's values) to the
// outer gradient loop on stacks of its own. The inner stacks are made once
// per step and entered through every enclosing loop, so instances of the
// inner loop take turns: the inner forward counter of outer iteration k+1
// starts once outer iteration k has pushed (its inner loop's trip count
// among that), and the inner gradient loop of outer gradient iteration k+1
// once that of k has finished popping.
class LoopGradient {
 public:
  LoopGradient(const Scope& gs, const View& v, Loop loop, GradMap& grads, LoopGradient* outer)
      : gs_(gs), v_(v), loop_(std::move(loop)), grads_(grads), outer_(outer),
        in_frame_(loop_.in_frame), guards_(gs, v.size(), loop_.in_frame),
        invariants_(loop_.invariants.begin(), loop_.invariants.end()) {}

  Status Build();

 private:
  Status CheckNoLoopInCond() const;
  void AddForwardCounter();
  Status CloseForwardCounter();
  void AddInputGradients(const Header& h);
  std::vector<Output> InitialGradients();
  StatusOr<std::vector<Output>> BodyGradients(const Scope& body, const Header& g);
  // Rewrites the inputs of the gradient body's nodes [first, end) that come
  // from outside the gradient loop.
  Status RewireInputs(const Scope& body, int first, int end);
  // `x`, output of forward node `src`, as the gradient body reads it.
  StatusOr<Output> GradValue(const Scope& body, const Output& x, int src);
  StatusOr<Output> Pop(const Scope& body, const Output& forward);
  // Output `port` of cond Switch `sw` of the forward body, switched again in
  // the gradient body.
  StatusOr<Output> SwitchAgain(const Scope& body, int sw, int port);
  // A node of the gradient body live exactly in the iterations whose
  // forward counterpart took `side` of its cond.
  StatusOr<Output> Pivot(const Scope& body, const CondSide& side);
  Output EnterInto(const Output& outside);
  // `outside`, from the step's top level, entered into the forward loop
  // through every loop enclosing it.
  Output ForwardEnter(const Output& outside);
  // Node `id`, added by a nested loop's gradient, is part of the forward
  // graph: not rewired here nor in enclosing loops; a value of this loop's
  // forward frame when `in_this_frame`.
  void NoteForward(int id, bool in_this_frame);
  void NoteForwardRange(int first, int end, int in_this_frame = -1);
  bool InFrame(int id) const {
    return id < static_cast<int>(in_frame_.size()) && in_frame_[id];
  }

  const Scope gs_;
  const View& v_;
  const Loop loop_;
  GradMap& grads_;
  LoopGradient* const outer_;  // the loop this one is nested in; null when none
  std::vector<bool> in_frame_;  // loop_.in_frame and the nested loops' nodes noted so
  const CondGuards guards_;      // of the forward loop's values
  const std::set<int> invariants_;
  std::set<int> forward_added_;  // by NoteForward
  Scope top_ = gs_.WithPrefix("").WithNoControlDependencies();
  Header counter_;  // the forward counter (one variable)
  std::string counter_prefix_;
  std::string grad_frame_;
  Scope grad_scope_ = top_;  // the gradient loop's, without control dependencies
  int grad_start_ = 0;       // the gradient loop's first node
  std::vector<Output> pushes_, pops_;  // the counters' NextIterations wait on these
  // Pushes and pops on a cond's side: the counters wait on them through a Merge (WaitOn).
  std::vector<Output> cond_pushes_, cond_pops_;
  std::map<std::string, Output> popped_, entered_, forward_entered_;  // by the tensor's name
  std::map<std::pair<std::string, int>, Output> pivots_;  // by predicate name and side
};

void LoopGradient::NoteForward(int id, bool in_this_frame) {
  forward_added_.insert(id);
  if (in_this_frame) {
    if (id >= static_cast<int>(in_frame_.size())) in_frame_.resize(id + 1);
    in_frame_[id] = true;
  }
  if (outer_ != nullptr) outer_->NoteForward(id, false);
}

void LoopGradient::NoteForwardRange(int first, int end, int in_this_frame) {
  for (int id = first; id < end; ++id) NoteForward(id, id == in_this_frame);
}

Output LoopGradient::ForwardEnter(const Output& outside) {
  auto it = forward_entered_.find(outside.name());
  if (it != forward_entered_.end()) return it->second;
  const Output from = outer_ == nullptr ? outside : outer_->ForwardEnter(outside);
  const int first = top_.num_nodes();
  Output e = top_.AddOperation(from.is_ref ? "RefEnter" : "Enter", {from},
                               FrameAttrs(loop_.frame, loop_.parallel_iterations, true))
                 .output(0);
  NoteForwardRange(first, top_.num_nodes());
  return forward_entered_.emplace(outside.name(), e).first->second;
}

void LoopGradient::AddForwardCounter() {
  counter_prefix_ = top_.UniqueName(loop_.frame + "/grad_count");
  const Scope s = top_.WithPrefix(counter_prefix_);
  const Output& cond = loop_.loop_cond;
  Output zero = IntConst(s, 0);
  std::vector<Output> after;
  if (outer_ != nullptr) {
    zero = outer_->ForwardEnter(zero);
    after.push_back(outer_->counter_.identities[0]);  // instances take turns
  }
  counter_ = AddHeader(
      s, {zero}, loop_.frame, loop_.parallel_iterations, [&](const Output&) { return cond; },
      after);
}

// Where each float loop variable's gradient starts: what reached its Exit.
std::vector<Output> LoopGradient::InitialGradients() {
  std::vector<Output> init;
  const Scope s = gs_.WithName(loop_.frame + "_grad_init");
  for (const LoopVar& lv : loop_.vars) {
    const Output exit = v_.OutputOf({lv.exit, 0});
    if (!Floating(exit)) continue;
    auto it = grads_.find({lv.exit, 0});
    const Gradient dy = it == grads_.end() ? Gradient() : AggregateGradients(s, it->second);
    init.push_back(dy.valid() ? DenseOf(s, dy) : s.AddOperation("ZerosLike", {exit}).output(0));
  }
  for (int inv : loop_.invariants) {
    const Output x = v_.OutputOf(v_.Input(inv, 0));
    if (Floating(x)) init.push_back(s.AddOperation("ZerosLike", {x}).output(0));
  }
  return init;
}

// A loop nested in a cond's branch of this loop's body would run in some
// iterations only, and its gradient's counter and stacks in every one.
Status LoopGradient::CheckNoLoopInCond() const {
  for (int id = 0; id < v_.size(); ++id) {
    const NodeDef& n = v_.node(id);
    const std::string frame = AttrOr<std::string>(n, "frame_name", "");
    if (!loop_.in_frame[id] || !IsEnter(n) || frame == loop_.frame) continue;
    TFD_ASSIGN_OR_RETURN(CondGuard guard, guards_.Of(v_.Input(id, 0)));
    if (guard.empty()) continue;
    return errors::InvalidArgument(
        "the gradient of while loop '", loop_.frame, "' is not supported: its body has loop '",
        frame, "' inside a cond (", Where(n), "); a cond in a loop's body, or a loop in a cond ",
        "outside any loop, is differentiable");
  }
  return OkStatus();
}

Status LoopGradient::Build() {
  TFD_RETURN_IF_ERROR(CheckNoLoopInCond());
  const int first = top_.num_nodes();
  AddForwardCounter();
  TFD_RETURN_IF_ERROR(gs_.status());
  if (outer_ != nullptr) {
    // The trip count is read by the gradient loop, in the outer gradient's frame.
    outer_->NoteForwardRange(first, top_.num_nodes(), top_.FindNode(counter_.exits[0].node));
  }
  std::vector<Output> init{counter_.exits[0]};
  for (const Output& x : InitialGradients()) init.push_back(x);
  TFD_RETURN_IF_ERROR(gs_.status());
  const Scope g = gs_.WithPrefix(gs_.UniqueName(loop_.frame + "_grad")).WithNoControlDependencies();
  grad_frame_ = g.name_prefix();
  grad_scope_ = g;
  grad_start_ = g.num_nodes();
  Header h = AddHeader(g, init, grad_frame_, loop_.parallel_iterations, [&](const Output& count) {
    const Scope c = g.WithControlDependencies({count});
    return c
        .AddOperation("LoopCond", {c.AddOperation("Greater", {count, IntConst(c, 0)}).output(0)})
        .output(0);
  });
  TFD_RETURN_IF_ERROR(g.status());
  const Scope body = g.WithName("body").WithControlDependencies({h.identities[0]});
  TFD_ASSIGN_OR_RETURN(std::vector<Output> next, BodyGradients(body, h));
  next.insert(next.begin(),
              body.AddOperation("Sub", {h.identities[0], IntConst(body, 1)}).output(0));
  CloseLoop(body, h, next, WaitOn(g.WithName("body"), pops_, cond_pops_, h.identities[0]));
  TFD_RETURN_IF_ERROR(CloseForwardCounter());
  // The next outer gradient iteration's instance of this loop starts once this one is done.
  if (outer_ != nullptr) outer_->pops_.push_back(h.exits[0]);
  AddInputGradients(h);
  return OkStatus();
}

Status LoopGradient::CloseForwardCounter() {
  // The forward counter counts iterations once their pushes are done.
  const Scope fc =
      top_.WithPrefix(counter_prefix_).WithControlDependencies({counter_.identities[0]});
  const int first = top_.num_nodes();
  Output plus = fc.AddOperation("Add", {counter_.identities[0], IntConst(fc, 1)}).output(0);
  const Scope free = fc.WithNoControlDependencies();
  CloseLoop(free, counter_, {plus}, WaitOn(free, pushes_, cond_pushes_, counter_.identities[0]));
  if (outer_ != nullptr) outer_->NoteForwardRange(first, top_.num_nodes());
  return gs_.status();
}

// The gradient loop's Exits: of each float variable's initial value, then of
// each float invariant.
void LoopGradient::AddInputGradients(const Header& h) {
  size_t k = 1;
  for (const LoopVar& lv : loop_.vars) {
    if (Floating(v_.OutputOf({lv.exit, 0}))) grads_[v_.Input(lv.enter, 0)].push_back(Gradient{.dense = h.exits[k++]});
  }
  for (int inv : loop_.invariants) {
    if (Floating(v_.OutputOf(v_.Input(inv, 0)))) grads_[v_.Input(inv, 0)].push_back(Gradient{.dense = h.exits[k++]});
  }
}

// The gradient of one iteration of the body: from the gradients of the
// values it passes to the next iteration (the gradient loop's variables) to
// those of the values it started from, and of the invariants, accumulated.
StatusOr<std::vector<Output>> LoopGradient::BodyGradients(const Scope& body, const Header& g) {
  std::vector<Output> ys, xs, dys;
  size_t k = 1;
  for (const LoopVar& lv : loop_.vars) {
    if (!Floating(v_.OutputOf({lv.exit, 0}))) continue;
    ys.push_back(v_.OutputOf(v_.Input(lv.next, 0)));
    xs.push_back(v_.OutputOf({lv.identity, 0}));
    dys.push_back(g.identities[k++]);
  }
  const size_t num_vars = xs.size();
  for (int inv : loop_.invariants) {
    if (Floating(v_.OutputOf(v_.Input(inv, 0)))) xs.push_back(v_.OutputOf({inv, 0}));
  }
  const int first = body.num_nodes();
  // The body alone: the loop's own nodes pass values on, their gradient is
  // the gradient loop itself.
  std::vector<bool> within = loop_.in_frame;
  for (const LoopVar& lv : loop_.vars) {
    for (int id : {lv.enter, lv.merge, lv.sw, lv.identity, lv.next}) within[id] = false;
  }
  for (int inv : loop_.invariants) within[inv] = false;
  LoopGradient* const enclosing = tl_enclosing;
  tl_enclosing = this;
  auto dx = AddGradientsWithin(body, ys, xs, dys, within);
  tl_enclosing = enclosing;
  TFD_RETURN_IF_ERROR(dx.status());
  TFD_RETURN_IF_ERROR(RewireInputs(body, first, body.num_nodes()));
  std::vector<Output> next;
  for (size_t i = 0; i < xs.size(); ++i) {
    const Output& acc = g.identities[1 + i];
    if (i < num_vars) {
      next.push_back((*dx)[i].valid() ? (*dx)[i] : body.AddOperation("ZerosLike", {acc}).output(0));
    } else {
      next.push_back((*dx)[i].valid() ? body.AddOperation("Add", {acc, (*dx)[i]}).output(0) : acc);
    }
  }
  return next;
}

Status LoopGradient::RewireInputs(const Scope& body, int first, int end) {
  for (int id = first; id < end && body.ok(); ++id) {
    if (forward_added_.count(id) > 0) continue;  // a nested loop's forward part
    const NodeDef node = body.node(id);  // a copy: UpdateInput changes it
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      auto ref = ParseInput(node.inputs[k]);
      if (!ref.ok() || ref->control) continue;
      const int src = body.FindNode(ref->node);
      if (src < 0 || (src >= grad_start_ && forward_added_.count(src) == 0)) {
        continue;  // in the gradient loop
      }
      TFD_ASSIGN_OR_RETURN(Output with, GradValue(body, body.OutputOf(ref->node, ref->port), src));
      body.UpdateInput(node.name, static_cast<int>(k), with);
    }
  }
  return body.status();
}

StatusOr<Output> LoopGradient::GradValue(const Scope& body, const Output& x, int src) {
  if (!InFrame(src)) return EnterInto(x);
  // An invariant is the same in every iteration: entered again, not stacked.
  if (invariants_.count(src) > 0) return EnterInto(v_.OutputOf(v_.Input(src, 0)));
  if (guards_.IsCondSwitch(src)) return SwitchAgain(body, src, x.port);
  return Pop(body, x);
}

// A cond's Switch only passes its input on, live on its predicate's side:
// the same Switch of the gradient's input and predicate is live in exactly
// the iterations the forward one was, and stacks nothing more (a loop
// invariant a branch reads, say, stays unstacked).
StatusOr<Output> LoopGradient::SwitchAgain(const Scope& body, int sw, int port) {
  const Output forward = v_.OutputOf({sw, port});
  auto it = popped_.find(forward.name());
  if (it != popped_.end()) return it->second;
  const auto data = v_.Input(sw, 0), pred = v_.Input(sw, 1);
  TFD_ASSIGN_OR_RETURN(Output x, GradValue(body, v_.OutputOf(data), data.first));
  TFD_ASSIGN_OR_RETURN(Output p, GradValue(body, v_.OutputOf(pred), pred.first));
  const Output again = body.AddOperation("Switch", {x, p}).output(port);
  TFD_RETURN_IF_ERROR(body.status());
  return popped_.emplace(forward.name(), again).first->second;
}

StatusOr<Output> LoopGradient::Pivot(const Scope& body, const CondSide& side) {
  const Output pred = v_.OutputOf(side.pred);
  const auto key = std::make_pair(pred.name(), side.branch);
  auto it = pivots_.find(key);
  if (it != pivots_.end()) return it->second;
  TFD_ASSIGN_OR_RETURN(Output p, GradValue(body, pred, side.pred.first));
  Output taken = body.AddOperation("Switch", {p, p}).output(side.branch);
  return pivots_.emplace(key, body.AddOperation("Identity", {taken}).output(0)).first->second;
}

// `forward`, computed in the forward loop, pushed there in every iteration
// that computed it and popped here in the iterations that replay those:
// a value on a cond's side is popped only where the gradient's pivots of
// its guard are live (TF1 switches the stack for that).
StatusOr<Output> LoopGradient::Pop(const Scope& body, const Output& forward) {
  auto it = popped_.find(forward.name());
  if (it != popped_.end()) return it->second;
  auto guard_or = guards_.Of({top_.FindNode(forward.node), forward.port});
  if (!guard_or.ok()) {
    return guard_or.status().WithContext("gradient of while loop '" + loop_.frame + "'");
  }
  const CondGuard guard = std::move(guard_or).value();
  std::vector<Output> pivots;
  for (const CondSide& side : guard) {
    TFD_ASSIGN_OR_RETURN(Output p, Pivot(body, side));
    pivots.push_back(p);
  }
  const Scope s = top_.WithPrefix(top_.UniqueName(loop_.frame + "/grad_stack"));
  // One stack per step, entered through the enclosing loops: see the class comment.
  const int first = top_.num_nodes();
  Output handle =
      s.AddOperation("StackV2", {IntConst(s, -1)}, {{"elem_type", forward.dtype}}).output(0);
  Output in_forward = ForwardEnter(handle);
  // A reference (a TensorArray made in the body) is stacked as one.
  const char* push = forward.is_ref ? "_StackPushRef" : "StackPushV2";
  const char* pop = forward.is_ref ? "_StackPopRef" : "StackPopV2";
  (guard.empty() ? pushes_ : cond_pushes_)
      .push_back(s.WithControlDependencies({counter_.identities[0]})
                     .AddOperation(push, {in_forward, forward})
                     .output(0));
  if (outer_ != nullptr) outer_->NoteForwardRange(first, top_.num_nodes());
  Output in_grad =
      s.AddOperation("RefEnter", {handle}, FrameAttrs(grad_frame_, loop_.parallel_iterations, true))
          .output(0);
  Operation popped = body.WithControlDependencies(pivots).AddOperation(
      pop, {in_grad}, {{"elem_type", forward.dtype}});
  (guard.empty() ? pops_ : cond_pops_).push_back(popped.output(0));
  TFD_RETURN_IF_ERROR(body.status());
  return popped_.emplace(forward.name(), popped.output(0)).first->second;
}

// A tensor from outside both loops, as a loop invariant of the gradient loop.
Output LoopGradient::EnterInto(const Output& outside) {
  auto it = entered_.find(outside.name());
  if (it != entered_.end()) return it->second;
  Output e = grad_scope_
                 .AddOperation(outside.is_ref ? "RefEnter" : "Enter", {outside},
                               FrameAttrs(grad_frame_, loop_.parallel_iterations, true))
                 .output(0);
  return entered_.emplace(outside.name(), e).first->second;
}

}  // namespace

Status AddWhileLoopGradient(const Scope& gs, int exit_id, int num_forward, GradMap& grads,
                            std::set<std::string>& done) {
  const View v(gs, num_forward);
  TFD_ASSIGN_OR_RETURN(Loop loop, Analyze(v, exit_id));
  if (done.count(loop.frame) > 0) return OkStatus();
  // A loop no gradient reaches has none to give: so a nested loop, seen from
  // outside the loop it is nested in, is left to that loop's gradient.
  bool reached = false;
  for (const LoopVar& lv : loop.vars) reached = reached || grads.count({lv.exit, 0}) > 0;
  if (!reached) return OkStatus();
  done.insert(loop.frame);
  return LoopGradient(gs, v, std::move(loop), grads, tl_enclosing).Build();
}

}  // namespace tfd::kernels
