#include "common/while_gradients.h"

#include <deque>
#include <functional>

#include "common/gradients.h"

namespace tfd::grad_internal {
namespace {

// How deep in the body of loops whose gradient is being built this thread
// is: a loop reached there is nested in another.
thread_local int tl_body_depth = 0;

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
  std::vector<int> invariants;  // Enters with is_constant
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

// The nodes that run in the loop: reached from its Enters without leaving
// through an Exit.
std::vector<bool> FrameNodes(const View& v, const std::vector<int>& enters) {
  std::vector<bool> in(v.size());
  std::deque<int> work(enters.begin(), enters.end());
  while (!work.empty()) {
    const int id = work.front();
    work.pop_front();
    if (in[id] || v.node(id).op == "Exit") continue;
    in[id] = true;
    for (const auto& c : v.consumers(id)) work.push_back(c.first);
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
    if (n.op != "Enter" || AttrOr<std::string>(n, "frame_name", "") != loop.frame) continue;
    enters.push_back(id);
    if (AttrOr<bool>(n, "is_constant", false)) {
      loop.invariants.push_back(id);
    } else {
      TFD_ASSIGN_OR_RETURN(LoopVar lv, FindVar(v, id));
      loop.vars.push_back(lv);
    }
  }
  loop.in_frame = FrameNodes(v, enters);
  for (int id = 0; id < v.size(); ++id) {
    const NodeDef& n = v.node(id);
    if (loop.in_frame[id] && (n.op == "Enter" || n.op == "RefEnter") &&
        AttrOr<std::string>(n, "frame_name", "") != loop.frame) {
      return errors::InvalidArgument("the gradient of while loop '", loop.frame,
                                     "' is not supported: it has a loop nested in its body (",
                                     Where(n), ")");
    }
  }
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

// `cond_of` gives the LoopCond from the first variable's Merge.
Header AddHeader(const Scope& s, const std::vector<Output>& init, const std::string& frame,
                 int64_t parallel, const std::function<Output(const Output&)>& cond_of) {
  Header h;
  for (const Output& x : init) {
    Output e = s.AddOperation("Enter", {x}, FrameAttrs(frame, parallel, false)).output(0);
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
               const std::vector<Operation>& after) {
  for (size_t i = 0; i < next.size() && s.ok(); ++i) {
    const Scope ns = i == 0 ? s.WithControlDependencies(after) : s;
    s.UpdateInput(h.merges[i].node, 1, ns.AddOperation("NextIteration", {next[i]}).output(0));
  }
}

// Builds one loop's gradient; see AddWhileLoopGradient.
class LoopGradient {
 public:
  LoopGradient(const Scope& gs, const View& v, Loop loop, GradMap& grads)
      : gs_(gs), v_(v), loop_(std::move(loop)), grads_(grads) {}

  Status Build();

 private:
  void AddForwardCounter();
  std::vector<Output> InitialGradients();
  StatusOr<std::vector<Output>> BodyGradients(const Scope& body, const Header& g);
  // Rewrites the inputs of the gradient body's nodes [first, end) that come
  // from outside the gradient loop.
  void RewireInputs(const Scope& body, int first, int end);
  Output Pop(const Scope& body, const Output& forward);
  Output EnterInto(const Output& outside);

  const Scope gs_;
  const View& v_;
  const Loop loop_;
  GradMap& grads_;
  Scope top_ = gs_.WithPrefix("").WithNoControlDependencies();
  Header counter_;  // the forward counter (one variable)
  std::string counter_prefix_;
  std::string grad_frame_;
  Scope grad_scope_ = top_;  // the gradient loop's, without control dependencies
  int grad_start_ = 0;       // the gradient loop's first node
  std::vector<Operation> pushes_, pops_;
  std::map<std::string, Output> popped_, entered_;  // by the forward tensor's name
};

void LoopGradient::AddForwardCounter() {
  counter_prefix_ = top_.UniqueName(loop_.frame + "/grad_count");
  const Scope s = top_.WithPrefix(counter_prefix_);
  const Output& cond = loop_.loop_cond;
  counter_ = AddHeader(s, {IntConst(s, 0)}, loop_.frame, loop_.parallel_iterations,
                       [&](const Output&) { return cond; });
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

Status LoopGradient::Build() {
  AddForwardCounter();
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
  CloseLoop(body, h, next, pops_);
  // The forward counter counts iterations once their pushes are done.
  const Scope fc =
      top_.WithPrefix(counter_prefix_).WithControlDependencies({counter_.identities[0]});
  Output plus = fc.AddOperation("Add", {counter_.identities[0], IntConst(fc, 1)}).output(0);
  CloseLoop(fc.WithNoControlDependencies(), counter_, {plus}, pushes_);
  TFD_RETURN_IF_ERROR(gs_.status());
  // The gradient loop's Exits: of each float variable's initial value, then
  // of each float invariant.
  size_t k = 1;
  for (const LoopVar& lv : loop_.vars) {
    if (Floating(v_.OutputOf({lv.exit, 0}))) grads_[v_.Input(lv.enter, 0)].push_back(Gradient{.dense = h.exits[k++]});
  }
  for (int inv : loop_.invariants) {
    if (Floating(v_.OutputOf(v_.Input(inv, 0)))) grads_[v_.Input(inv, 0)].push_back(Gradient{.dense = h.exits[k++]});
  }
  return OkStatus();
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
  ++tl_body_depth;
  auto dx = AddGradientsWithin(body, ys, xs, dys, within);
  --tl_body_depth;
  TFD_RETURN_IF_ERROR(dx.status());
  RewireInputs(body, first, body.num_nodes());
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

void LoopGradient::RewireInputs(const Scope& body, int first, int end) {
  for (int id = first; id < end && body.ok(); ++id) {
    const NodeDef node = body.node(id);  // a copy: UpdateInput changes it
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      auto ref = ParseInput(node.inputs[k]);
      if (!ref.ok() || ref->control) continue;
      const int src = body.FindNode(ref->node);
      if (src < 0 || src >= grad_start_) continue;  // in the gradient loop
      const Output x = body.OutputOf(ref->node, ref->port);
      Output with;
      if (src < static_cast<int>(loop_.in_frame.size()) && loop_.in_frame[src]) {
        // An invariant is the same in every iteration: entered again, not stacked.
        with =
            body.node(src).op == "Enter" ? EnterInto(v_.OutputOf(v_.Input(src, 0))) : Pop(body, x);
      } else {
        with = EnterInto(x);
      }
      body.UpdateInput(node.name, static_cast<int>(k), with);
    }
  }
}

// `forward`, computed in the forward loop, pushed there in every iteration
// and popped here.
Output LoopGradient::Pop(const Scope& body, const Output& forward) {
  auto it = popped_.find(forward.name());
  if (it != popped_.end()) return it->second;
  const Scope s = top_.WithPrefix(top_.UniqueName(loop_.frame + "/grad_stack"));
  Output handle =
      s.AddOperation("StackV2", {IntConst(s, -1)}, {{"elem_type", forward.dtype}}).output(0);
  Output in_forward =
      s.AddOperation("RefEnter", {handle}, FrameAttrs(loop_.frame, loop_.parallel_iterations, true))
          .output(0);
  pushes_.push_back(s.WithControlDependencies({counter_.identities[0]})
                        .AddOperation("StackPushV2", {in_forward, forward}));
  Output in_grad =
      s.AddOperation("RefEnter", {handle}, FrameAttrs(grad_frame_, loop_.parallel_iterations, true))
          .output(0);
  Operation pop = body.AddOperation("StackPopV2", {in_grad}, {{"elem_type", forward.dtype}});
  pops_.push_back(pop);
  return popped_.emplace(forward.name(), pop.output(0)).first->second;
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

bool IsLoopExit(const Scope& scope, int id) { return scope.node(id).op == "Exit"; }

Status AddWhileLoopGradient(const Scope& gs, int exit_id, int num_forward, GradMap& grads,
                            std::set<std::string>& done) {
  const View v(gs, num_forward);
  TFD_ASSIGN_OR_RETURN(Loop loop, Analyze(v, exit_id));
  if (!done.insert(loop.frame).second) return OkStatus();
  if (tl_body_depth > 0) {
    return errors::InvalidArgument("the gradient of while loop '", loop.frame,
                                   "' is not supported: it is nested in another loop's body");
  }
  return LoopGradient(gs, v, std::move(loop), grads).Build();
}

}  // namespace tfd::grad_internal
