// The gradient of a while loop, built as a whole, TensorFlow 1.x's way
// (its control_flow_grad.py and GradLoopState), when AddGradients
// (common/gradients.h) reaches one of the loop's Exits: the Exit's GradFn is
// a WholeGradFn over AddWhileLoopGradient (registered by loop_ops.cc).
//
// The forward loop gets an iteration counter and, for each of its values the
// gradient needs, a stack (StackV2) it pushes that value onto in every
// iteration. The gradient loop starts from the counter's final value and
// runs as many iterations, popping those values in reverse order; its loop
// variables are the gradients of the forward loop variables (each starts as
// the gradient reaching the loop's Exit) and, for each loop invariant (an
// Enter with is_constant), the sum of its gradient over the iterations. Its
// Exits are the gradients of the forward loop's inputs. A reference the
// body uses (a RefEnter invariant: a TensorArray it reads or writes) is
// entered into the gradient loop as it is, not stacked; one the body makes
// (an array per iteration) is stacked as a reference (_StackPushRef). A
// stack's pushes are ordered by the forward counter and its pops by the
// gradient loop's counter, so that parallel iterations keep them last in,
// first out.
//
// The loop must have the structure ops::WhileLoop (api/control_flow.h)
// builds: per loop variable Enter -> Merge -> Switch (on the LoopCond) ->
// Exit and Identity, the Merge's back edge a NextIteration. A loop nested in
// another loop's body gets a gradient loop nested in the outer gradient loop,
// one instance per outer iteration (TF1's way; "Dynamic Control Flow in
// Large-Scale Machine Learning", Yu et al. 2018): each instance's trip count
// and the outer loop's values it reads travel on the outer loop's stacks;
// the inner loop's own stacks are one per step, which its instances use in
// turn (LoopGradient in while_grad.cc says how).
//
// A cond in the body (a Switch not on the loop's LoopCond) gets its
// gradient cond in the gradient loop, TF1's way: a value on one side of the
// cond is pushed only in the iterations that took that side (the push of a
// dead value does not run), and popped only where the gradient's pivot for
// that side, a Switch of the cond's predicate popped like any other value,
// is live; the counters wait on such pushes and pops through a Merge, which
// a dead control input does not kill. Which side a value is on comes from
// the graph (cond_guards.h). What the cond's Switches pass on is not
// stacked: the gradient switches their inputs again on the popped
// predicate. The Switch's and Merge's own gradients
// (cond_ops.cc) then route each iteration's gradient through the side it
// took. A loop inside a cond inside the body is refused, INVALID_ARGUMENT
// naming the inner loop's Enter: its gradient's counter and stacks would
// run in every iteration (a loop inside a cond outside any loop is fine).
//
// Thread-safety: as Scope (one thread per graph).
#pragma once

#include <set>
#include <string>

#include "common/gradients.h"
#include "common/scope.h"

namespace tfd::kernels {

// Builds the gradient of the loop that Exit `exit_id` leaves, unless its frame
// is in `done` (then adds it there) or no gradient reaches its Exits: reads
// the gradients reaching each of the loop's Exits from `grads`, adds the
// gradients of the loop's inputs (each loop variable's initial value and each
// invariant) to `grads`. `num_forward`: the nodes of the graph being
// differentiated (AddGradients' n).
Status AddWhileLoopGradient(const Scope& gs, int exit_id, int num_forward, GradientMap& grads,
                            std::set<std::string>& done);

}  // namespace tfd::kernels
