// Control flow in the graph API: Cond, TensorFlow 1.x's tf.cond built from
// Switch and Merge (kernels/control/cond_ops.cc).
//
//   std::vector<Output> y = ops::Cond(scope, is_training, {x},
//       [](const Scope& s, const std::vector<Output>& in) {
//         return std::vector<Output>{ops::Mul(s, in[0], 0.5f)};
//       },
//       [](const Scope& s, const std::vector<Output>& in) { return in; });
//
// Each tensor a branch computes with comes in through `inputs`, switched on
// `pred`: the branch receives them as its arguments, live when its side is
// taken, dead otherwise, so the untaken branch's nodes never run (a side
// effect there, an AssignAdd say, does not happen) and gradients flow back
// to the inputs through the taken side only (TF's control_flow_grad). Every
// node a branch adds also waits on its side's pivot, so constants and
// stateful ops with no data input from `inputs` belong to the branch too.
// A branch may read variables and queues by reference and use constants
// from outside; any other tensor from outside the branch must be passed in
// `inputs` (it would carry no deadness, and its gradient would be lost):
// INVALID_ARGUMENT names the node and the tensor. Both branches return the
// same number of outputs with matching dtypes; each result is a Merge of
// the two.
//
// Nodes are named under "cond/" (then "cond_1/", ...) below the scope's
// prefix: "cond/Switch", "cond/true/...", "cond/Merge". A branch's nodes may
// live on other tasks (an update colocated with its variable on a ps): the
// untaken side's deadness crosses with its transfers.
//
// Thread-safety: as Scope (one thread per graph).
#pragma once

#include <functional>
#include <vector>

#include "api/ops.h"

namespace tfd::ops {

using BranchFn =
    std::function<std::vector<Output>(const Scope& scope, const std::vector<Output>& inputs)>;

// Errors stay in the scope, as with every wrapper; on one the result is a
// vector of invalid Outputs.
std::vector<Output> Cond(const Scope& scope, const Input& pred, const std::vector<Output>& inputs,
                         const BranchFn& true_fn, const BranchFn& false_fn);

}  // namespace tfd::ops
