#include "kernels/control/cond_guards.h"

#include <algorithm>

namespace tfd::kernels {
namespace {

// `side` added to `guard` unless there already.
void AddSide(CondGuard& guard, const CondSide& side) {
  if (std::find(guard.begin(), guard.end(), side) == guard.end()) guard.push_back(side);
}

}  // namespace

CondGuards::CondGuards(const Scope& scope, int n, const std::vector<bool>& in_frame)
    : node_(n), unknown_(n, -1), pred_(n, {-1, 0}) {
  auto framed = [&](int id) { return id >= 0 && id < n && id < static_cast<int>(in_frame.size()) &&
                                     in_frame[id]; };
  std::vector<std::vector<Input>> inputs(n);
  for (int id = 0; id < n; ++id) {
    if (!framed(id)) continue;
    for (const std::string& in : scope.node(id).inputs) {
      auto ref = ParseInput(in);
      if (!ref.ok()) continue;
      const int src = scope.FindNode(ref->node);
      if (framed(src)) inputs[id].push_back({src, ref->port, ref->control});
    }
    const NodeDef& node = scope.node(id);
    if (node.op == "Switch" && inputs[id].size() >= 2 && !inputs[id][1].control &&
        scope.node(inputs[id][1].node).op != "LoopCond") {
      pred_[id] = {inputs[id][1].node, inputs[id][1].port};
    }
  }
  // Inputs before their consumers: a depth-first walk that does not follow
  // back edges (a NextIteration into its loop's Merge).
  std::vector<char> state(n, 0);  // 0: not seen, 1: on the walk, 2: ordered
  std::vector<int> order;
  for (int root = 0; root < n; ++root) {
    if (!framed(root) || state[root] != 0) continue;
    std::vector<std::pair<int, size_t>> walk{{root, 0}};
    state[root] = 1;
    while (!walk.empty()) {
      const int id = walk.back().first;
      const size_t k = walk.back().second++;
      if (k == inputs[id].size()) {
        state[id] = 2;
        order.push_back(id);
        walk.pop_back();
        continue;
      }
      const int src = inputs[id][k].node;
      if (scope.node(src).op == "NextIteration" || state[src] != 0) continue;
      state[src] = 1;
      walk.push_back({src, 0});
    }
  }
  for (int id : order) Compute(scope, id, inputs[id]);
}

CondGuard CondGuards::TensorGuard(int id, int port) const {
  CondGuard g = node_[id];
  if (pred_[id].first >= 0) AddSide(g, CondSide{pred_[id], port});
  return g;
}

void CondGuards::Compute(const Scope& scope, int id, const std::vector<Input>& inputs) {
  const NodeDef& node = scope.node(id);
  bool loop_merge = false;
  for (const Input& in : inputs) {
    loop_merge = loop_merge || scope.node(in.node).op == "NextIteration";
  }
  if (node.op == "Merge" && !loop_merge) {
    ComputeMerge(id, inputs);
    if (unknown_[id] == id) unjoined_[id] = DescribeUnjoined(scope, id, inputs);
    return;
  }
  for (const Input& in : inputs) {
    if (scope.node(in.node).op == "NextIteration") continue;  // the loop's back edge
    if (unknown_[in.node] >= 0) {
      unknown_[id] = unknown_[in.node];
      return;
    }
    const CondGuard g = in.control ? node_[in.node] : TensorGuard(in.node, in.port);
    for (const CondSide& side : g) AddSide(node_[id], side);
  }
}

// A cond's Merge: each data input's guard is the Merge's own and one side of
// a single predicate, both sides present.
void CondGuards::ComputeMerge(int id, const std::vector<Input>& inputs) {
  std::vector<CondGuard> guards;
  for (const Input& in : inputs) {
    if (in.control) continue;  // a Merge runs on a live data input whatever its controls are
    if (unknown_[in.node] >= 0) {
      unknown_[id] = unknown_[in.node];
      return;
    }
    guards.push_back(TensorGuard(in.node, in.port));
  }
  bool joins = !guards.empty() && !guards[0].empty();
  bool sides[2] = {false, false};
  for (const CondGuard& g : guards) {
    joins = joins && g.size() == guards[0].size() && g.back().pred == guards[0].back().pred &&
            std::equal(g.begin(), g.end() - 1, guards[0].begin());
    if (joins) sides[g.back().branch != 0 ? 1 : 0] = true;
  }
  if (!joins || !sides[0] || !sides[1]) {
    unknown_[id] = id;
    return;
  }
  node_[id].assign(guards[0].begin(), guards[0].end() - 1);
}

std::string CondGuards::DescribeUnjoined(const Scope& scope, int id,
                                         const std::vector<Input>& inputs) const {
  std::string seen;
  for (const Input& in : inputs) {
    if (in.control) continue;
    const CondGuard g = TensorGuard(in.node, in.port);
    seen += seen.empty() ? "" : ", ";
    seen += "'" + scope.node(in.node).name + "' ";
    if (g.empty()) {
      seen += "on no cond's side";
    } else {
      const CondSide& last = g.back();
      seen += std::string("on the ") + (last.branch != 0 ? "true" : "false") + " side of '" +
              scope.OutputOf(scope.node(last.pred.first).name, last.pred.second).name() + "'";
    }
  }
  return "Merge '" + scope.node(id).name +
         "' was expected to join the two sides of one cond's predicate, as ops::Cond's Merge "
         "does, but its inputs are " + seen +
         ": which iterations computed the values after it is unknown";
}

StatusOr<CondGuard> CondGuards::Of(std::pair<int, int> key) const {
  if (!Analyzed(key.first)) return CondGuard{};
  const int merge = unknown_[key.first];
  if (merge >= 0) return errors::InvalidArgument(unjoined_.at(merge));
  return TensorGuard(key.first, key.second);
}

}  // namespace tfd::kernels
