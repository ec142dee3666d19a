// GraphBuilder: the graph a Python tfd.Graph builds, over common/scope.h and
// api/ (variables, gradients, optimizers), with each call's context (name
// scope, devices, device function, control dependencies) passed in from
// the Python side, which keeps TF's context-manager stacks.
//
// Unlike a C++ Scope, every call reports its own error at once (raised in
// Python as a tfd.errors class) and the graph stays usable afterwards: the
// refused node is not in it.
//
//   GraphBuilder g(registry);
//   BuildContext ctx;                 // top level, no device
//   auto [name, outputs] = g.AddOp("Const", {}, attrs, "c", ctx);
//
// Thread-safety: none; a Python Graph is built by one thread at a time
// (the GIL is held throughout).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/pybind11.h>

#include "common/scope.h"

namespace tfd::python {

// A Scope::DeviceFunction held by Python (tfd.train.replica_device_setter).
struct DeviceFunction {
  Scope::DeviceFunction fn;
};

// One tf.device block: a device spec, or a device function (spec unused).
struct DeviceBlock {
  std::string spec;
  std::shared_ptr<DeviceFunction> fn;
};

// Where the next node goes, as the Python stacks say.
struct BuildContext {
  std::string name_scope;  // "" for the top level, else "a/b"
  // The enclosing tf.device blocks, outermost first, from the innermost
  // tf.device(None) in. Applied as TF1 applies them: innermost first, a
  // spec filling only what is not chosen yet, a function given the device
  // chosen so far and choosing anew.
  std::vector<DeviceBlock> device_blocks;
  std::vector<std::string> control_inputs;  // node names
  // tfd's init_scope: the node belongs to no cond or loop being built
  // (Scope::OutsideControlFlow).
  bool outside_control_flow = false;
};

// One output as Python sees it: (node, port, dtype name, shape, is_ref).
pybind11::tuple OutputToPython(const Output& o);

class GraphBuilder {
 public:
  explicit GraphBuilder(const OpRegistry& registry);

  // Adds a node of `op`; `inputs` are (node, port) pairs (a list input
  // flat), `attrs` a dict of attr name to Python value (convert.h). Returns
  // (node name, [outputs]).
  pybind11::tuple AddOp(const std::string& op,
                        const std::vector<std::pair<std::string, int>>& inputs,
                        const pybind11::dict& attrs, const std::string& name,
                        const BuildContext& ctx);
  // A name free under the context's scope, reserved (TF's name scopes).
  std::string UniqueName(const std::string& name, const BuildContext& ctx);

  // The scope a call of `ctx` builds in; errors in the context (a
  // malformed device) are raised.
  Scope ScopeFor(const BuildContext& ctx, const std::string& op_name = "") const;
  // The output `node`:`port`, or INVALID_ARGUMENT naming it.
  Output OutputOf(const std::string& node, int port) const;
  // Raises the scope's recorded error, if any, and clears it.
  void RaiseIfError() const;

  const Scope& root() const { return root_; }
  int num_nodes() const { return root_.num_nodes(); }
  // The graph so far (attrs completed).
  GraphDef ToGraphDef() const { return root_.ToGraphDef(); }

 private:
  Scope root_;
};

// The variables, gradients and optimizers of a GraphBuilder (variables.cc):
// registered on the Python class beside AddOp.
void BindGraphBuilder(pybind11::module_& m);

}  // namespace tfd::python
