#include "common/gradients.h"

#include <deque>
#include <functional>
#include <map>
#include <queue>
#include <set>
#include <string>
#include <utility>
#include <variant>

namespace tfd {
namespace {

using GradMap = GradientMap;

std::string Where(const NodeDef& n) { return "node '" + n.name + "' (" + n.op + ")"; }

// The data edges of the first `n` nodes of the graph, both ways.
struct Edges {
  std::vector<std::vector<TensorKey>> inputs;     // per node: {producer, port}
  std::vector<std::vector<TensorKey>> consumers;  // per node: {consumer, producer port}
};

StatusOr<Edges> CollectEdges(const Scope& scope, int n) {
  Edges e;
  e.inputs.resize(n);
  e.consumers.resize(n);
  for (int id = 0; id < n; ++id) {
    for (const std::string& in : scope.node(id).inputs) {
      TFD_ASSIGN_OR_RETURN(InputRef ref, ParseInput(in));
      if (ref.control) continue;
      const int src = scope.FindNode(ref.node);
      if (src < 0 || src >= n) return errors::Internal("input '", in, "' of a built node is lost");
      e.inputs[id].push_back({src, ref.port});
      e.consumers[src].push_back({id, ref.port});
    }
  }
  return e;
}

// Nodes on some data path from an x to a y: reachable from the consumers of
// the xs' exact outputs, and feeding some y.
std::vector<bool> NodesBetween(const Edges& e, const std::vector<TensorKey>& xs,
                               const std::vector<TensorKey>& ys) {
  const size_t n = e.inputs.size();
  std::vector<bool> reached(n), needed(n), between(n);
  std::deque<int> work;
  for (const auto& [node, port] : xs) {
    for (const auto& [consumer, p] : e.consumers[node]) {
      if (p == port) work.push_back(consumer);
    }
  }
  while (!work.empty()) {
    const int id = work.front();
    work.pop_front();
    if (reached[id]) continue;
    reached[id] = true;
    for (const auto& c : e.consumers[id]) work.push_back(c.first);
  }
  for (const auto& y : ys) work.push_back(y.first);
  while (!work.empty()) {
    const int id = work.front();
    work.pop_front();
    if (needed[id]) continue;
    needed[id] = true;
    for (const auto& in : e.inputs[id]) work.push_back(in.first);
  }
  for (size_t i = 0; i < n; ++i) between[i] = reached[i] && needed[i];
  return between;
}

// The frame an Enter (or RefEnter) brings its input into; "" for any other
// node.
std::string FrameOf(const NodeDef& n) {
  if (n.op != "Enter" && n.op != "RefEnter") return "";
  auto it = n.attrs.find("frame_name");
  const std::string* frame = it == n.attrs.end() ? nullptr : std::get_if<std::string>(&it->second);
  return frame == nullptr ? "" : *frame;
}

// For each node, the loop Exits that must come after it: for an Enter, its
// frame's. An Exit's value needs every Enter of its loop (an invariant the
// body reads included), but no data edge leads from one to the Exit but
// through the back edge ForwardOrder leaves out; without this, an invariant
// whose source was added after the loop's Exits (a variable made in the
// body, outside control flow) would come after them. An Exit's frame is
// its Switch's Merge's Enter's, as ops::WhileLoop builds them.
std::vector<std::vector<int>> ExitsAfter(const Scope& scope, const Edges& e) {
  const int n = static_cast<int>(e.inputs.size());
  std::vector<std::vector<int>> exits(n);
  std::map<std::string, std::vector<int>> enters;  // by frame
  for (int id = 0; id < n; ++id) {
    const std::string frame = FrameOf(scope.node(id));
    if (!frame.empty()) enters[frame].push_back(id);
  }
  if (enters.empty()) return exits;
  auto first_input = [&](int id) { return e.inputs[id].empty() ? -1 : e.inputs[id][0].first; };
  for (int id = 0; id < n; ++id) {
    if (scope.node(id).op != "Exit") continue;
    const int sw = first_input(id);
    const int merge = sw < 0 ? -1 : first_input(sw);
    const int enter = merge < 0 ? -1 : first_input(merge);
    auto it = enter < 0 ? enters.end() : enters.find(FrameOf(scope.node(enter)));
    if (it == enters.end()) continue;
    for (int en : it->second) exits[en].push_back(id);
  }
  return exits;
}

// The first n nodes in an order where each comes after the nodes its data
// inputs read, a loop's back edges (from a NextIteration) aside, and a
// loop's Exits after all its Enters; among ready nodes the lowest id first,
// so a graph built in order keeps it. A node wired in after its readers
// (the Switch a cond adds for a tensor its branch captured, the Enter of a
// loop invariant) comes before them.
StatusOr<std::vector<int>> ForwardOrder(const Scope& scope, const Edges& e) {
  const int n = static_cast<int>(e.inputs.size());
  auto back_edge = [&](int src) { return scope.node(src).op == "NextIteration"; };
  const std::vector<std::vector<int>> exits_after = ExitsAfter(scope, e);
  std::vector<int> pending(n);
  for (int id = 0; id < n; ++id) {
    for (const auto& in : e.inputs[id]) pending[id] += back_edge(in.first) ? 0 : 1;
    for (int exit : exits_after[id]) ++pending[exit];
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int id = 0; id < n; ++id) {
    if (pending[id] == 0) ready.push(id);
  }
  std::vector<int> order;
  order.reserve(n);
  while (!ready.empty()) {
    const int id = ready.top();
    ready.pop();
    order.push_back(id);
    for (int exit : exits_after[id]) {
      if (--pending[exit] == 0) ready.push(exit);
    }
    if (back_edge(id)) continue;
    for (const auto& c : e.consumers[id]) {
      if (--pending[c.first] == 0) ready.push(c.first);
    }
  }
  for (int id = 0; id < n && static_cast<int>(order.size()) < n; ++id) {
    if (pending[id] > 0) {
      return errors::Internal(Where(scope.node(id)), " is on a cycle of data edges that no "
                              "NextIteration closes");
    }
  }
  return order;
}

Status CheckFloating(const Output& t, const char* what, size_t i) {
  if (!t.valid()) return errors::InvalidArgument(what, "[", i, "] is invalid");
  if (!IsFloating(t.dtype)) {
    return errors::InvalidArgument(what, "[", i, "] ('", t.name(), "') is ", DTypeName(t.dtype),
                                   ": only float32 and float64 tensors have gradients");
  }
  return OkStatus();
}

StatusOr<TensorKey> KeyOf(const Scope& scope, const Output& t, const char* what, size_t i) {
  TFD_RETURN_IF_ERROR(CheckFloating(t, what, i));
  const int id = scope.FindNode(t.node);
  if (id < 0) return errors::InvalidArgument(what, "[", i, "] names '", t.node, "', not in graph");
  return TensorKey{id, t.port};
}

// The op's gradient function run on `dy`: its sparse-aware one when it has
// one that does not decline, else its dense one on densified gradients.
Status RunGradFn(Scope& ns, const NodeAnnotation& ann, GradInputs& in,
                 const std::vector<Gradient>& dy, std::vector<Gradient>* dx) {
  if (const auto* aware = ann.reg->grad_fn.target<SparseAwareGradFn>()) {
    TFD_ASSIGN_OR_RETURN(bool done, aware->sparse(ns, in, dy, dx));
    if (done) return OkStatus();
    dx->assign(in.inputs.size(), Gradient());
  }
  for (size_t p = 0; p < dy.size(); ++p) in.dy[p] = DenseOf(ns, dy[p]);
  std::vector<Output> dense(in.inputs.size());
  TFD_RETURN_IF_ERROR(ann.reg->grad_fn(ns, in, &dense));
  for (size_t i = 0; i < dense.size() && i < dx->size(); ++i) (*dx)[i].dense = dense[i];
  if (dense.size() != dx->size()) dx->resize(dense.size());
  return OkStatus();
}

// INTERNAL unless gradient `g` for input `x` has x's dtype (and, dense,
// a compatible shape).
Status CheckInputGradient(const NodeDef& node, size_t i, const Output& x, const Gradient& g) {
  const bool shape_ok = g.is_sparse() || g.dense.shape.IsCompatibleWith(x.shape);
  if (g.dtype() == x.dtype && shape_ok) return OkStatus();
  const Output& t = g.is_sparse() ? g.sparse.values : g.dense;
  return errors::Internal("the gradient of ", Where(node), " for input ", i, " is ",
                          g.is_sparse() ? "sparse " : "", DTypeName(t.dtype), t.shape.ToString(),
                          " but the input is ", DTypeName(x.dtype), x.shape.ToString());
}

// Runs the gradient function of node `id`, adding what it returns for each
// input to `grads`.
Status Backprop(const Scope& gs, const Edges& edges, int id, GradMap& grads) {
  // Copies: adding nodes below may move the scope's storage.
  const NodeDef node = gs.node(id);
  const NodeAnnotation ann = gs.annotation(id);
  const Scope ns = gs.WithName(node.name + "_grad");

  GradInputs in;
  in.node = node;
  std::vector<Gradient> dy;
  bool any = false;
  for (size_t p = 0; p < ann.output_types.size(); ++p) {
    in.outputs.push_back(gs.OutputOf(node.name, static_cast<int>(p)));
    auto it = grads.find({id, static_cast<int>(p)});
    dy.push_back(it == grads.end() ? Gradient() : AggregateGradients(ns, it->second));
    if (it != grads.end()) it->second = {dy.back()};  // summed once, also when this is an x
    any = any || dy.back().valid();
  }
  if (!any) return OkStatus();  // e.g. an integer output feeding only axes
  if (!ann.reg->grad_fn) {
    return errors::NotFound("no gradient is registered for op '", node.op, "' (", Where(node),
                            " lies on the path from xs to ys)");
  }
  for (const auto& [src, port] : edges.inputs[id]) {
    in.inputs.push_back(gs.OutputOf(gs.node(src).name, port));
  }
  in.dy.resize(dy.size());
  for (size_t p = 0; p < dy.size(); ++p) {
    if (!dy[p].is_sparse()) in.dy[p] = dy[p].dense;
  }
  std::vector<Gradient> dx(in.inputs.size());
  Scope fn_scope = ns;
  Status s = RunGradFn(fn_scope, ann, in, dy, &dx);
  if (s.ok()) s = gs.status();
  if (!s.ok()) return s.WithContext("gradient of " + Where(node));
  if (dx.size() != in.inputs.size()) {
    return errors::Internal("the gradient of ", Where(node), " gives ", dx.size(),
                            " input gradients for ", in.inputs.size(), " inputs");
  }
  for (size_t i = 0; i < dx.size(); ++i) {
    const Output& x = in.inputs[i];
    if (!dx[i].valid() || !IsFloating(x.dtype)) continue;
    TFD_RETURN_IF_ERROR(CheckInputGradient(node, i, x, dx[i]));
    grads[edges.inputs[id][i]].push_back(dx[i]);
  }
  return OkStatus();
}

// Where one call puts its nodes: "gradients/", then "gradients_1/", ... as
// TF1's name scopes, so that what a gradient function keys by its call (a
// TensorArray's gradient array) is one per call.
Scope CallScope(const Scope& scope) { return scope.WithPrefix(scope.UniqueName("gradients")); }

// AddGradientsKeepSparse over the nodes marked in `within`, adding its
// nodes through `gs` (CallScope).
StatusOr<std::vector<Gradient>> GradientsWithin(const Scope& scope, const Scope& gs,
                                                const std::vector<Output>& ys,
                                                const std::vector<Output>& xs,
                                                const std::vector<Output>& grad_ys,
                                                const std::vector<bool>& within) {
  TFD_RETURN_IF_ERROR(scope.status());
  if (!grad_ys.empty() && grad_ys.size() != ys.size()) {
    return errors::InvalidArgument("grad_ys has ", grad_ys.size(), " tensors for ", ys.size(),
                                   " ys");
  }
  std::vector<TensorKey> y_keys, x_keys;
  for (size_t i = 0; i < ys.size(); ++i) {
    TFD_ASSIGN_OR_RETURN(TensorKey k, KeyOf(scope, ys[i], "ys", i));
    y_keys.push_back(k);
  }
  for (size_t i = 0; i < xs.size(); ++i) {
    TFD_ASSIGN_OR_RETURN(TensorKey k, KeyOf(scope, xs[i], "xs", i));
    x_keys.push_back(k);
  }
  const int n = scope.num_nodes();  // the forward graph: nodes added below are not in it
  TFD_ASSIGN_OR_RETURN(Edges edges, CollectEdges(scope, n));
  std::vector<bool> between = NodesBetween(edges, x_keys, y_keys);
  for (int id = 0; id < n; ++id) {
    between[id] = between[id] && id < static_cast<int>(within.size()) && within[id];
  }

  GradMap grads;
  for (size_t i = 0; i < ys.size(); ++i) {
    Output seed;
    if (!grad_ys.empty()) {
      seed = grad_ys[i];
      if (!seed.valid() || seed.dtype != ys[i].dtype) {
        return errors::InvalidArgument("grad_ys[", i, "] must be a valid ",
                                       DTypeName(ys[i].dtype), " tensor like ys[", i, "] ('",
                                       ys[i].name(), "')");
      }
    } else {
      seed = gs.WithOpName("grad_ys_" + std::to_string(i)).AddOperation("OnesLike", {ys[i]})
                 .output(0);
    }
    grads[y_keys[i]].push_back(Gradient{.dense = seed});
  }
  TFD_RETURN_IF_ERROR(gs.status());

  TFD_ASSIGN_OR_RETURN(std::vector<int> order, ForwardOrder(scope, edges));
  std::set<std::string> constructs_built;  // while loops whose gradient is built
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const int id = *it;
    if (!between[id]) continue;
    const OpRegistration* reg = gs.annotation(id).reg;
    const auto* whole = reg == nullptr ? nullptr : reg->grad_fn.target<WholeGradFn>();
    if (whole != nullptr) {
      TFD_RETURN_IF_ERROR(whole->build(gs, id, n, grads, constructs_built));
    } else {
      TFD_RETURN_IF_ERROR(Backprop(gs, edges, id, grads));
    }
  }

  std::vector<Gradient> result;
  for (const TensorKey& k : x_keys) {
    auto it = grads.find(k);
    result.push_back(it == grads.end() ? Gradient() : AggregateGradients(gs, it->second));
  }
  TFD_RETURN_IF_ERROR(gs.status());
  return result;
}

// The gradients `grads` as dense tensors, made through `gs` (CallScope).
StatusOr<std::vector<Output>> Densified(const Scope& gs, const std::vector<Gradient>& grads) {
  std::vector<Output> result;
  for (const Gradient& g : grads) result.push_back(DenseOf(gs, g));
  TFD_RETURN_IF_ERROR(gs.status());
  return result;
}

}  // namespace

StatusOr<std::vector<Gradient>> AddGradientsKeepSparse(const Scope& scope,
                                                       const std::vector<Output>& ys,
                                                       const std::vector<Output>& xs,
                                                       const std::vector<Output>& grad_ys) {
  return GradientsWithin(scope, CallScope(scope), ys, xs, grad_ys,
                         std::vector<bool>(scope.num_nodes(), true));
}

StatusOr<std::vector<Output>> AddGradients(const Scope& scope, const std::vector<Output>& ys,
                                           const std::vector<Output>& xs,
                                           const std::vector<Output>& grad_ys) {
  return AddGradientsWithin(scope, ys, xs, grad_ys, std::vector<bool>(scope.num_nodes(), true));
}

StatusOr<std::vector<Output>> AddGradientsWithin(const Scope& scope, const std::vector<Output>& ys,
                                                 const std::vector<Output>& xs,
                                                 const std::vector<Output>& grad_ys,
                                                 const std::vector<bool>& within) {
  const Scope gs = CallScope(scope);
  TFD_ASSIGN_OR_RETURN(std::vector<Gradient> grads,
                       GradientsWithin(scope, gs, ys, xs, grad_ys, within));
  return Densified(gs, grads);
}

}  // namespace tfd
