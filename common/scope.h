// Scope: builds a GraphDef node by node, checking each node against the op
// registry as it is added, so every Output knows its dtype and shape.
//
// A root scope owns the graph being built; child scopes share it and differ
// in the name prefix, device, device function and control dependencies they
// give the nodes added through them. Errors do not throw and are not
// returned by each call: the first one is kept in the graph (scope.status())
// and every later AddOp returns invalid outputs, so model code reads linearly
// and is checked once at the end.
//
//   Scope root = Scope::NewRootScope(registry);
//   Scope layer = root.WithName("layer1").WithDevice("/job:worker");
//   std::vector<Output> y = layer.AddOp("MatMul", {x, w});   // "layer1/MatMul"
//   TFD_RETURN_IF_ERROR(root.status());
//   TFD_RETURN_IF_ERROR(SaveGraph(root.ToGraphDef(), "graph.capnp", GraphFormat::kBinary));
//
// The builder knows no concrete op: typed wrappers (api/ops.h) and gradient
// functions (kernels/*/..._grad.cc) are written on top of AddOp.
//
// Thread-safety: none. A graph is built by one thread; scopes are cheap
// handles to shared state, so copies of one root must not be used from
// several threads at once.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/graph.h"
#include "common/graph_def.h"
#include "common/op_registry.h"

namespace tfd {

// One output of a node of the graph being built.
struct Output {
  std::string node;  // empty: invalid (the node could not be added; "no gradient")
  int port = 0;
  DType dtype = DType::kInvalid;
  PartialShape shape;   // what shape inference knows
  bool is_ref = false;  // a reference (a variable's output), not a value

  bool valid() const { return !node.empty(); }
  // "node" for port 0, else "node:port": the form of inputs, feeds, fetches.
  std::string name() const;
};

// A node added to the graph, with its outputs; an op without outputs (NoOp,
// Assign used as a target) is referred to through this.
struct Operation {
  std::string name;  // empty: invalid
  std::vector<Output> outputs;

  bool valid() const { return !name.empty(); }
  // Output i, or an invalid Output when there is no such output.
  Output output(int i) const;
};

// A variable of the graph, recorded by whoever creates it (api/variables.h)
// so initializers and optimizers can find every variable later.
struct VariableInfo {
  Output ref;                // the variable node's output (a reference)
  Output value;              // its read snapshot, what model code computes with
  std::string initializer;   // the node that assigns its initial value
  std::string device;        // the variable node's requested device
  bool trainable = true;
  // A per-replica variable (tf.local_variables): on the task running the
  // graph, left out of the global initializer and of the init barrier.
  bool local = false;
};

class Scope {
 public:
  // Chooses the device of a node given the node (attrs completed, device set
  // from the scope): how parameter placement strategies (api/placement.h)
  // put variables on ps tasks. Returns the device to use.
  using DeviceFunction = std::function<std::string(const NodeDef& node)>;

  // A new, empty graph. `registry` must outlive the scope and its children.
  static Scope NewRootScope(const OpRegistry& registry);

  // Children. Nodes added through WithName("layer1") are named
  // "layer1/<name>"; prefixes nest.
  Scope WithName(const std::string& name) const;
  // The prefix replaced: "" puts nodes at the top level, "w" under "w/" —
  // for nodes named after another node, such as an optimizer's slots.
  Scope WithPrefix(const std::string& prefix) const;
  // The next nodes added through the returned scope are named `name` (under
  // the prefix) rather than after their op; repeated names get "_1", "_2".
  // "" restores naming after the op.
  Scope WithOpName(const std::string& name) const;
  // A partial device spec merged over this scope's, as nested tf.device
  // blocks do: "/job:ps" then "/task:1" gives "/job:ps/task:1". A malformed
  // spec is an error of the scope.
  Scope WithDevice(const std::string& device) const;
  // Exactly the device of `node`'s output, with no device function: for
  // nodes that belong beside it (a variable's initializer, its slots).
  Scope ColocatedWith(const Output& node) const;
  // fn decides the device of every node added through the returned scope
  // (nullptr: none).
  Scope WithDeviceFunction(DeviceFunction fn) const;
  // Nodes added through the returned scope run after these, in addition to
  // this scope's control dependencies.
  Scope WithControlDependencies(const std::vector<Operation>& ops) const;
  Scope WithControlDependencies(const std::vector<Output>& outputs) const;
  Scope WithNoControlDependencies() const;
  // TF1's init_scope, for a variable made inside a loop's body or a cond's
  // branch: nodes added through the returned scope belong to no cond or
  // loop being built (api/control_flow.h reads them from outside, a
  // variable through a RefEnter) and wait on no control dependency, so its
  // initializer runs outside the loop, once.
  Scope OutsideControlFlow() const;

  // Adds a node of op `op` with the given data inputs (a list input, such as
  // AddN's, is given flat) and attrs; type and count attrs the inputs imply
  // may be left out, and defaults are filled in. On any error (unknown op,
  // wrong dtype, certain shape mismatch, invalid input) the scope keeps the
  // error and the result is invalid.
  Operation AddOperation(const std::string& op, const std::vector<Output>& inputs,
                         AttrMap attrs = {}) const;
  std::vector<Output> AddOp(const std::string& op, const std::vector<Output>& inputs,
                            AttrMap attrs = {}) const {
    return AddOperation(op, inputs, std::move(attrs)).outputs;
  }

  // Makes data input `index` of node `node` read `from` instead (TF's
  // Graph::UpdateEdge): how a while loop's Merge, added before the body that
  // feeds it, gets its back edge from the NextIteration. `from` must have the
  // dtype the input has; errors stay in the scope.
  void UpdateInput(const std::string& node, int index, const Output& from) const;
  // Makes what shape inference knows of `out` (a node of this graph) the
  // less specific `shape`, in the graph and in `out`: a while loop's Merge
  // holds its shape invariant, what every iteration's value shares, not the
  // first iteration's shape. A `shape` that contradicts the inferred one is
  // INVALID_ARGUMENT, kept in the scope.
  void RelaxShape(Output& out, const PartialShape& shape) const;
  // TF1's Tensor.set_shape: what shape inference knows of `out` merged
  // with `shape`, in the graph and in `out`, so nodes added after read the
  // more specific shape (a promise about run time, not checked there). A
  // `shape` that contradicts the known one is INVALID_ARGUMENT, kept in the
  // scope.
  void RefineShape(Output& out, const PartialShape& shape) const;

  // The first error of the graph, shared by every scope of it.
  Status status() const;
  bool ok() const { return status().ok(); }
  // Records `s` unless an error is already recorded.
  void UpdateStatus(const Status& s) const;
  // The recorded error, cleared, so that building goes on: for a front end
  // that reports each error at the call that made it (the Python package)
  // rather than once at the end. The node refused with the error is not in
  // the graph; nodes a composite builder added before it stay.
  Status TakeStatus() const;

  const OpRegistry& registry() const;
  const std::string& name_prefix() const { return prefix_; }
  // The name WithOpName set ("" when nodes are named after their op).
  const std::string& op_name() const { return op_name_; }
  const std::string& device() const { return device_; }
  // The nodes (by name) every node added through this scope runs after.
  const std::vector<std::string>& control_dependencies() const { return control_deps_; }

  // "prefix/base" when free, else "prefix/base_1", ...; the name is
  // reserved, so nodes added later do not take it.
  std::string UniqueName(const std::string& base) const;

  // Nodes so far, in the order added (a topological order, but for the back
  // edges UpdateInput makes).
  int num_nodes() const;
  const NodeDef& node(int id) const;
  const NodeAnnotation& annotation(int id) const;
  int FindNode(const std::string& name) const;  // -1 when absent
  // Whether node `id` was added through an OutsideControlFlow() scope.
  bool IsOutsideControlFlow(int id) const;
  // Output `port` of node `name`; invalid when there is none.
  Output OutputOf(const std::string& name, int port) const;
  // The output's value when known at graph time (a Const, a fully known
  // Shape), else an uninitialized Tensor. Shares the value's buffer.
  Tensor ConstantValue(const Output& o) const;

  // The graph's variables, in creation order.
  void AddVariable(VariableInfo v) const;
  const std::vector<VariableInfo>& variables() const;

  // The graph-level random seed (tf.set_random_seed), shared by every scope
  // of the graph; nullopt (the default) when none is set. api/random_seed.h
  // derives each random op's seeds from it.
  void SetRandomSeed(std::optional<int64_t> seed) const;
  std::optional<int64_t> random_seed() const;

  // The graph built so far (attrs completed). Check status() first: nodes
  // refused with an error are not in it.
  GraphDef ToGraphDef() const;

 private:
  struct State;
  explicit Scope(std::shared_ptr<State> state);
  PartialShape* KnownShape(const Output& out, const char* what) const;
  void ForgetValue(const Output& out) const;

  std::shared_ptr<State> state_;
  std::string prefix_;
  std::string op_name_;
  std::string device_;
  DeviceFunction device_fn_;
  std::vector<std::string> control_deps_;  // node names
  bool outside_control_flow_ = false;
};

}  // namespace tfd
