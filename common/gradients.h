// Symbolic differentiation of a graph being built: AddGradients adds the
// nodes that compute d(sum of ys)/d(x) for each x, from the gradient
// function each op registers beside its kernel (OpRegistry::RegisterGradient).
//
//   TFD_ASSIGN_OR_RETURN(std::vector<Output> g, AddGradients(scope, {loss}, {w.ref(), b.ref()}));
//
// As in TensorFlow: gradients flow back in reverse topological order, the
// gradients reaching one tensor along several paths are summed (AddN), only
// nodes on a path from some x to some y are differentiated, and an x no y
// depends on gets an invalid Output ("no gradient"). A variable's reference
// output may be an x: its gradient is that of the value its consumers read.
// Only float32/float64 tensors carry gradients; integer and bool inputs (axes,
// indices, conditions) get none.
//
// The machinery relies on the ops AddN and OnesLike being registered (it sums
// and seeds gradients with them); it knows no other op, but for while loops,
// whose gradient is built as a whole when their Exits are reached
// (common/while_gradients.h).
//
// Thread-safety: as Scope (one thread per graph).
#pragma once

#include <string>
#include <vector>

#include "common/scope.h"

namespace tfd {

// What a gradient function sees of the forward node.
struct GradInputs {
  NodeDef node;                 // the forward node, attrs completed
  std::vector<Output> inputs;   // its data inputs, in order
  std::vector<Output> outputs;  // its outputs
  std::vector<Output> dy;       // per output; invalid where no gradient reached it

  // The forward node's attr `name` as T; INVALID_ARGUMENT when missing or of
  // another type.
  template <typename T>
  StatusOr<T> GetAttr(const std::string& name) const {
    auto it = node.attrs.find(name);
    if (it == node.attrs.end()) {
      return errors::InvalidArgument("node '", node.name, "' has no attr '", name, "'");
    }
    if (const T* v = std::get_if<T>(&it->second)) return *v;
    if constexpr (requires { typename T::value_type; } && !std::is_same_v<T, std::string>) {
      if (std::holds_alternative<EmptyList>(it->second)) return T{};
    }
    return errors::InvalidArgument("attr '", name, "' of node '", node.name, "' has type ",
                                   AttrTypeName(it->second));
  }
};

// Adds the gradients of sum(ys) with respect to each of xs. grad_ys, when
// given, holds one tensor per y to start from (the gradient flowing into y);
// by default each starts at ones shaped like y. Nodes are named under
// "gradients/" below `scope`'s prefix and take its device.
//
// Errors: INVALID_ARGUMENT for an invalid or non-floating y or x, or grad_ys
// of the wrong number or dtype; NOT_FOUND naming the op and the node when a
// node on the path from xs to ys has no registered gradient; a gradient
// function's own error with the node it was differentiating.
StatusOr<std::vector<Output>> AddGradients(const Scope& scope, const std::vector<Output>& ys,
                                           const std::vector<Output>& xs,
                                           const std::vector<Output>& grad_ys = {});

// As AddGradients, differentiating only the nodes whose id is marked in
// `within` (ids past its end count as unmarked): how a while loop's
// gradient (common/while_gradients.h) differentiates the loop's body alone.
StatusOr<std::vector<Output>> AddGradientsWithin(const Scope& scope, const std::vector<Output>& ys,
                                                 const std::vector<Output>& xs,
                                                 const std::vector<Output>& grad_ys,
                                                 const std::vector<bool>& within);

}  // namespace tfd
