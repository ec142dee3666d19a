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
// Sparse gradients (TF's IndexedSlices): an op may register a sparse-aware
// gradient function (SparseAwareGradFn, below, as its GradFn) that gives rows
// and their indices instead of a dense tensor — Gather does, for params —
// and one that passes them through (Identity, so a variable's read keeps
// them). AddGradientsKeepSparse returns such a gradient as it is; every
// other consumer of a gradient gets it densified exactly once (Densify).
// Sparse contributions to one tensor are concatenated, not summed; a mix of
// sparse and dense ones is densified and summed.
//
// The machinery relies on the ops AddN and OnesLike being registered (it sums
// and seeds gradients with them), and for sparse gradients on ConcatV2,
// Cast, Reshape, Slice and UnsortedSegmentSum; it knows no other op, but for
// while loops, whose gradient is built as a whole when their Exits are
// reached (kernels/control/while_grad.h).
//
// Thread-safety: as Scope (one thread per graph).
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
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

// Rows of a tensor shaped dense_shape: the tensor is zero but for
// row indices[i], which is values[i] (rows of equal index add up).
// values [n, ...] (float), indices [n] (int32 or int64), dense_shape an int
// vector (int32 or int64) whose first element is the number of rows.
struct IndexedSlices {
  Output values;
  Output indices;
  Output dense_shape;
  bool valid() const { return values.valid(); }
};

// A gradient as autodiff gives it: dense (a tensor) or sparse (slices);
// at most one of the two is valid, neither when there is no gradient.
struct Gradient {
  Output dense;
  IndexedSlices sparse;
  bool valid() const { return dense.valid() || sparse.valid(); }
  bool is_sparse() const { return sparse.valid(); }
  DType dtype() const { return is_sparse() ? sparse.values.dtype : dense.dtype; }
};

// The dense tensor `slices` stands for (TF's _IndexedSlicesToTensor): an
// UnsortedSegmentSum of the values into dense_shape[0] rows. Errors go to
// the scope.
Output Densify(const Scope& scope, const IndexedSlices& slices);
// `g` as a dense tensor: itself when dense, Densify'd when sparse.
Output DenseOf(const Scope& scope, const Gradient& g);

// The sum of the gradients reaching one tensor: invalid when none is valid;
// the one gradient itself; slices concatenated when all are sparse (TF's
// _AggregateIndexedSlicesGradients); else AddN of them all, densified.
Gradient AggregateGradients(const Scope& scope, const std::vector<Gradient>& grads);

// A gradient function that may take and give sparse gradients, registered
// as an op's GradFn (OpRegistry::RegisterGradient), which AddGradients
// recognizes. `sparse` sees the gradients reaching the outputs as they are
// and sets (*dx)[i] for input i, returning true; or returns false to
// decline, and `dense` runs on densified gradients instead (as it does when
// the function is called as a plain GradFn).
//
//   r.RegisterGradient("Gather", SparseAwareGradFn{GatherSparseGrad, GatherGrad});
struct SparseAwareGradFn {
  using Sparse = std::function<StatusOr<bool>(Scope& scope, const GradInputs& in,
                                              const std::vector<Gradient>& dy,
                                              std::vector<Gradient>* dx)>;
  Sparse sparse;
  GradFn dense;

  Status operator()(Scope& scope, const GradInputs& in, std::vector<Output>* dx) const {
    return dense(scope, in, dx);
  }
};

// The gradients AddGradients has found so far, by tensor ({node id, output
// port}), each tensor's summed when it is differentiated.
using TensorKey = std::pair<int, int>;
using GradientMap = std::map<TensorKey, std::vector<Gradient>>;

// The gradient of a construct built as a whole rather than node by node (a
// while loop: kernels/control/while_grad.h), registered as the GradFn of
// the op AddGradients meets first going backwards (Exit). AddGradients then
// calls `build` with the node reached, the number of nodes of the graph
// being differentiated, the gradients so far (it reads those reaching the
// construct and adds those of its inputs) and the constructs already built
// in this call, by name (so each is built once).
//
//   r.RegisterGradient("Exit", WholeGradFn{AddWhileLoopGradient});
struct WholeGradFn {
  using Build = std::function<Status(const Scope& gs, int node, int num_forward,
                                     GradientMap& grads, std::set<std::string>& built)>;
  Build build;

  Status operator()(Scope&, const GradInputs& in, std::vector<Output>*) const {
    return errors::Internal("the gradient of node '", in.node.name, "' (", in.node.op,
                            ") is built for its whole construct, not node by node");
  }
};

// Adds the gradients of sum(ys) with respect to each of xs. grad_ys, when
// given, holds one tensor per y to start from (the gradient flowing into y);
// by default each starts at ones shaped like y. Nodes are named under
// "gradients/" below `scope`'s prefix ("gradients_1/", ... in later calls,
// as TF1 names them) and take its device.
//
// Errors: INVALID_ARGUMENT for an invalid or non-floating y or x, or grad_ys
// of the wrong number or dtype; NOT_FOUND naming the op and the node when a
// node on the path from xs to ys has no registered gradient; a gradient
// function's own error with the node it was differentiating.
StatusOr<std::vector<Output>> AddGradients(const Scope& scope, const std::vector<Output>& ys,
                                           const std::vector<Output>& xs,
                                           const std::vector<Output>& grad_ys = {});

// As AddGradients, but a gradient that arrives sparse (an x read only
// through gathers of its rows) stays sparse: rows and their indices.
StatusOr<std::vector<Gradient>> AddGradientsKeepSparse(const Scope& scope,
                                                       const std::vector<Output>& ys,
                                                       const std::vector<Output>& xs,
                                                       const std::vector<Output>& grad_ys = {});

// As AddGradients, differentiating only the nodes whose id is marked in
// `within` (ids past its end count as unmarked): how a while loop's
// gradient (kernels/control/while_grad.h) differentiates the loop's body alone.
StatusOr<std::vector<Output>> AddGradientsWithin(const Scope& scope, const std::vector<Output>& ys,
                                                 const std::vector<Output>& xs,
                                                 const std::vector<Output>& grad_ys,
                                                 const std::vector<bool>& within);

}  // namespace tfd
