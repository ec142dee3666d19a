#include "python/src/graph_builder.h"

#include "common/device_name.h"
#include "python/src/convert.h"
#include "python/src/errors.h"

namespace tfd::python {

namespace py = pybind11;

py::tuple OutputToPython(const Output& o) {
  return py::make_tuple(o.node, o.port, std::string(DTypeName(o.dtype)), ShapeToPython(o.shape),
                        o.is_ref);
}

GraphBuilder::GraphBuilder(const OpRegistry& registry) : root_(Scope::NewRootScope(registry)) {}

void GraphBuilder::RaiseIfError() const { ThrowIfError(root_.TakeStatus()); }

namespace {

// The device `blocks` choose for a node, TF1's way (BuildContext).
Scope::DeviceFunction Composed(std::vector<DeviceBlock> blocks) {
  return [blocks = std::move(blocks)](const NodeDef& node) {
    NodeDef asked = node;
    std::string device;
    for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
      if (it->fn) {
        asked.device = device;
        device = it->fn->fn(asked);
        continue;
      }
      auto outer = DeviceName::Parse(it->spec);
      auto chosen = DeviceName::Parse(device);
      // A malformed choice is left for AddOperation to report.
      if (outer.ok() && chosen.ok()) device = DeviceName::Merge(*outer, *chosen).ToString();
    }
    return device;
  };
}

}  // namespace

Scope GraphBuilder::ScopeFor(const BuildContext& ctx, const std::string& op_name) const {
  Scope s = root_.WithPrefix(ctx.name_scope);
  // The specs alone also make the scope's device: what a node made without
  // the functions (a local variable) is placed by.
  bool functions = false;
  for (const DeviceBlock& b : ctx.device_blocks) {
    if (b.fn) {
      functions = true;
    } else {
      s = s.WithDevice(b.spec);
    }
  }
  if (functions) s = s.WithDeviceFunction(Composed(ctx.device_blocks));
  if (ctx.outside_control_flow) s = s.OutsideControlFlow();
  std::vector<Operation> deps;
  for (const std::string& name : ctx.control_inputs) {
    if (root_.FindNode(name) < 0) {
      ThrowIfError(errors::InvalidArgument("control dependency '", name,
                                           "' is not a node of this graph"));
    }
    deps.push_back(Operation{name, {}});
  }
  s = s.WithControlDependencies(deps).WithOpName(op_name);
  RaiseIfError();
  return s;
}

Output GraphBuilder::OutputOf(const std::string& node, int port) const {
  Output o = root_.OutputOf(node, port);
  if (!o.valid()) {
    ThrowIfError(errors::InvalidArgument("'", node, ":", port,
                                         "' is not an output of this graph (is it from another "
                                         "tfd.Graph?)"));
  }
  return o;
}

py::tuple GraphBuilder::AddOp(const std::string& op,
                              const std::vector<std::pair<std::string, int>>& inputs,
                              const py::dict& attrs, const std::string& name,
                              const BuildContext& ctx) {
  const OpRegistration* reg = ValueOrThrow(root_.registry().Lookup(op));
  AttrMap attr_map;
  for (auto [key, value] : attrs) {
    const std::string attr = key.cast<std::string>();
    const AttrDef* def = reg->def.FindAttr(attr);
    if (def == nullptr) {
      ThrowIfError(errors::InvalidArgument("op ", op, " has no attr '", attr, "'"));
    }
    attr_map[attr] = ValueOrThrow(AttrFromPython(*def, value));
  }
  std::vector<Output> in;
  for (const auto& [node, port] : inputs) in.push_back(OutputOf(node, port));
  const Scope s = ScopeFor(ctx, name);
  const Operation result = s.AddOperation(op, in, std::move(attr_map));
  RaiseIfError();
  py::list outputs;
  for (const Output& o : result.outputs) outputs.append(OutputToPython(o));
  return py::make_tuple(result.name, outputs);
}

std::string GraphBuilder::UniqueName(const std::string& name, const BuildContext& ctx) {
  return ScopeFor(ctx).UniqueName(name);
}

}  // namespace tfd::python
