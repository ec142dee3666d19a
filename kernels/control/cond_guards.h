// Which conds decide whether a value of a while loop's body is computed in
// an iteration: the graph-side counterpart of TF1's CondContext, for the
// loop's gradient (while_grad.h). A value on one side of a cond in the body
// exists only in the iterations that took that side, so the gradient keeps
// it on a stack only then and pops it only in the gradient iterations that
// replay them (TF1's AddBackpropAccumulatedValue does the same).
//
// A value's guard is the list of cond sides it lies on, outermost first:
// each is the predicate (a tensor of the graph) and the side (0: false, 1:
// true) of a Switch that is not its loop's own (whose predicate is not a
// LoopCond). The value is live in an iteration exactly when every predicate
// of its guard had its side's value there. The rules, over the structure
// ops::Cond builds: a cond Switch's output b adds (pred, b) to its input's
// guard; a cond Merge (one without a NextIteration input) joins the two
// sides of one predicate, each input's guard being the Merge's own plus one
// side of that predicate; any other node lies on every side its data and
// control inputs lie on; what comes from outside the loop lies on none.
// A Merge that does not join two sides so (built by hand) leaves the values
// it reaches without a known guard: Of says so for those alone.
//
//   const CondGuards guards(scope, n, in_frame);
//   TFD_ASSIGN_OR_RETURN(CondGuard g, guards.Of({node_id, port}));
//
// Thread-safety: immutable once built; the Scope it reads is not retained.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/scope.h"

namespace tfd::kernels {

// One side of a cond: `pred` is the {node id, port} of the Switch's
// predicate input.
struct CondSide {
  std::pair<int, int> pred;
  int branch = 0;
  bool operator==(const CondSide&) const = default;
};
using CondGuard = std::vector<CondSide>;

class CondGuards {
 public:
  // Analyzes the nodes marked in `in_frame` (ids below `n`) of `scope`'s graph.
  CondGuards(const Scope& scope, int n, const std::vector<bool>& in_frame);

  // The guard of output `key.second` of node `key.first`; empty for nodes
  // outside the analyzed ones (such as those added after the analysis).
  // INVALID_ARGUMENT naming the Merge when the value lies after a Merge
  // that does not join the two sides of one cond.
  StatusOr<CondGuard> Of(std::pair<int, int> key) const;
  // Whether node `id` is a cond's Switch (one not on its loop's LoopCond).
  bool IsCondSwitch(int id) const { return Analyzed(id) && pred_[id].first >= 0; }

 private:
  struct Input {
    int node, port;
    bool control;
  };
  // Sets node_[id] (or unknown_[id]) from its inputs' guards, computed before.
  void Compute(const Scope& scope, int id, const std::vector<Input>& inputs);
  void ComputeMerge(int id, const std::vector<Input>& inputs);
  std::string DescribeUnjoined(const Scope& scope, int id, const std::vector<Input>& inputs) const;
  bool Analyzed(int id) const { return id >= 0 && id < static_cast<int>(node_.size()); }
  CondGuard TensorGuard(int id, int port) const;

  std::vector<CondGuard> node_;            // by node id: the guard of its inputs
  std::vector<int> unknown_;               // by node id: the Merge hiding its guard; -1: none
  std::vector<std::pair<int, int>> pred_;  // by node id: a cond Switch's predicate; {-1, 0}
  std::map<int, std::string> unjoined_;    // by the id of a Merge in unknown_: why
};

}  // namespace tfd::kernels
