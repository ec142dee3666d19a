// Control flow in the graph API: Cond, TensorFlow 1.x's tf.cond built from
// Switch and Merge (kernels/control/cond_ops.cc), and WhileLoop, its
// tf.while_loop, built from Enter, Merge, Switch, LoopCond, NextIteration
// and Exit (kernels/control/loop_ops.cc).
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
// A branch may also use any other tensor from outside, as TF1's cond
// does: it is switched on `pred` like the inputs (one Switch per tensor
// and side), so it is dead on the untaken side and its gradient flows
// back through the taken one; variables and queues are read by reference
// and constants as they are. Both branches return the same number of
// outputs with matching dtypes; each result is a Merge of the two.
//
// Nodes are named under "cond/" (then "cond_1/", ...) below the scope's
// prefix: "cond/Switch", "cond/true/...", "cond/Merge". A branch's nodes may
// live on other tasks (an update colocated with its variable on a ps): the
// untaken side's deadness crosses with its transfers.
//
// Thread-safety: as Scope (one thread per graph).
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "api/ops.h"

namespace tfd::ops {

using BranchFn =
    std::function<std::vector<Output>(const Scope& scope, const std::vector<Output>& inputs)>;

// Errors stay in the scope, as with every wrapper; on one the result is a
// vector of invalid Outputs.
std::vector<Output> Cond(const Scope& scope, const Input& pred, const std::vector<Output>& inputs,
                         const BranchFn& true_fn, const BranchFn& false_fn);

// WhileLoop: TensorFlow 1.x's tf.while_loop(cond, body, loop_vars,
// parallel_iterations, maximum_iterations).
//
//   // sum of 1..n
//   std::vector<Output> r = ops::WhileLoop(scope,
//       [](const Scope& s, const std::vector<Output>& v) { return ops::LessEqual(s, v[0], n); },
//       [](const Scope& s, const std::vector<Output>& v) {
//         return std::vector<Output>{ops::Add(s, v[0], 1), ops::Add(s, v[1], v[0])};
//       },
//       {ops::Const(scope, 1), ops::Const(scope, 0)});   // r[1] is the sum
//
// `cond` returns a scalar bool from the loop variables; `body` returns their
// next values, as many and of the same dtypes (shapes: below). The loop
// runs body while cond holds, possibly zero times, and returns the loop
// variables' last values. Every node cond and body add waits on the loop's
// pivot, so constants belong to the loop; a tensor from outside the loop
// that they use enters it once as a loop invariant (an Enter with
// is_constant). A loop may be built in a loop's body or in a cond's branch.
// Iterations run in parallel as far as their data allows, at most
// `parallel_iterations` at once; `maximum_iterations` (an int, or an int32 or
// int64 scalar tensor from outside the loop) stops the loop after that many
// iterations even if cond still holds (none when it is 0 or less). Nodes are named under
// "while/" (then "while_1/", ...) below the scope's prefix; that name is also
// the loop's frame_name. A variable's value() is read once, before the loop;
// its ref() enters as is (a RefEnter), so a body may update the variable
// (AssignAdd) or read it afresh (Identity of ref()) in every iteration.
// AddGradients differentiates a loop, TF1's way (kernels/control/while_grad.h):
// the values the gradient needs are kept on stacks in every iteration (those
// on one side of a Cond in the body, in the iterations that took it), so
// the backward pass holds each iteration's values until it has used them.
//
// Shapes are TF1's: a loop variable's static shape inside the loop and
// after it is its shape invariant, by default its initial shape; a body
// that returns a value of a contradicting shape (a vector that grows) is
// INVALID_ARGUMENT naming the variable, unless its invariant allows it
// (shape_invariants[i] = PartialShape({-1}), say).
struct WhileOptions {
  int parallel_iterations = 10;
  std::optional<Input> maximum_iterations;  // none: no limit
  // One per loop variable, or none (each variable's initial shape).
  std::vector<PartialShape> shape_invariants;
};
using LoopCondFn = std::function<Output(const Scope& scope, const std::vector<Output>& vars)>;

std::vector<Output> WhileLoop(const Scope& scope, const LoopCondFn& cond, const BranchFn& body,
                              const std::vector<Output>& loop_vars,
                              const WhileOptions& options = {});

}  // namespace tfd::ops
