// The Python class over GraphBuilder: ops, variables, parameter placement and
// writing the graph file (its gradients and optimizers: gradient_bindings.cc).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "api/graph_file.h"
#include "api/optimizers.h"
#include "api/placement.h"
#include "api/variables.h"
#include "common/graph.h"
#include "common/graph_io.h"
#include "python/src/convert.h"
#include "python/src/errors.h"
#include "python/src/builder_helpers.h"
#include "python/src/graph_builder.h"
#include "python/src/registry.h"

namespace tfd::python {

namespace py = pybind11;

using OutputRef = std::pair<std::string, int>;

py::tuple VariableToPython(const VariableInfo& v) {
  return py::make_tuple(OutputToPython(v.ref), OutputToPython(v.value), v.initializer, v.device,
                        v.trainable);
}

ops::Initializer InitializerFrom(const py::tuple& spec) {
  const std::string kind = spec[0].cast<std::string>();
  if (kind == "value") {
    return ops::Initializer::Value(
        ValueOrThrow(TensorFromArray(py::array::ensure(spec[1]), /*alias=*/false)));
  }
  const double a = spec[1].cast<double>(), b = spec[2].cast<double>();
  const auto seed = spec[3].cast<std::optional<int64_t>>();  // None: no op seed
  if (kind == "zeros") return ops::Initializer::Zeros();
  if (kind == "ones") return ops::Initializer::Ones();
  if (kind == "constant") return ops::Initializer::Constant(a);
  if (kind == "normal") return ops::Initializer::RandomNormal(a, seed, b);
  if (kind == "truncated_normal") return ops::Initializer::TruncatedNormal(a, seed, b);
  if (kind == "uniform") return ops::Initializer::RandomUniform(a, b, seed);
  ThrowIfError(errors::InvalidArgument("unknown initializer kind '", kind, "'"));
  return {};
}

py::tuple AddVariable(GraphBuilder& g, const BuildContext& ctx, const std::string& name,
                      py::handle shape, const std::string& dtype, const py::tuple& init,
                      bool trainable, bool local) {
  const PartialShape partial = ValueOrThrow(ShapeFromPython(shape));
  const auto full = partial.AsTensorShape();
  const auto type = DTypeFromName(dtype);
  if (!full || !type) {
    ThrowIfError(errors::InvalidArgument("variable '", name, "' needs a fully known shape and a "
                                         "dtype; got ", partial.ToString(), " and '", dtype, "'"));
  }
  ops::Variable v(g.ScopeFor(ctx, name), *full, *type, InitializerFrom(init),
                  {.trainable = trainable, .local = local});
  g.RaiseIfError();
  return VariableToPython(v.info());
}

// tf.Variable(initial_value=<a tensor of the graph>): the variable's dtype
// and (with validate_shape) shape are the tensor's, and its Assign reads
// it. Without validate_shape its shape is unknown and each assignment may
// change it (TF1's validate_shape=False). A local one is placed as
// ops::VariableOptions::local says.
py::tuple AddVariableFrom(GraphBuilder& g, const BuildContext& ctx, const std::string& name,
                          const OutputRef& initial, bool trainable, bool local,
                          bool validate_shape) {
  const Output value = g.OutputOf(initial.first, initial.second);
  Scope base = g.ScopeFor(ctx, name.empty() ? "Variable" : name);
  if (local) base = base.WithNoControlDependencies().WithDeviceFunction(nullptr);
  const PartialShape shape = validate_shape ? value.shape : PartialShape::Unknown();
  const Operation var =
      base.AddOperation("VariableV2", {}, {{"shape", shape}, {"dtype", value.dtype}});
  g.RaiseIfError();
  Scope inner = g.root().WithPrefix(var.name).ColocatedWith(var.output(0));
  if (ctx.outside_control_flow) inner = inner.OutsideControlFlow();
  const Operation assign = inner.WithOpName("Assign").AddOperation(
      "Assign", {var.output(0), value}, {{"validate_shape", validate_shape}});
  const Operation read = inner.WithOpName("read").AddOperation("Identity", {var.output(0)});
  g.RaiseIfError();
  VariableInfo info{var.output(0),  read.output(0),      assign.name,
                    inner.device(), trainable && !local, local};
  g.root().AddVariable(info);
  return VariableToPython(info);
}

// Tensor.set_shape: the output's known shape merged with `shape` (None,
// or a list of ints and None); returns the merged shape.
py::object SetShape(GraphBuilder& g, const OutputRef& out, py::handle shape) {
  Output o = g.OutputOf(out.first, out.second);
  g.root().RefineShape(o, ValueOrThrow(ShapeFromPython(shape)));
  g.RaiseIfError();
  return ShapeToPython(o.shape);
}

py::list Variables(const GraphBuilder& g, const std::string& which) {
  py::list out;
  for (const VariableInfo& v : g.root().variables()) {
    const bool keep = which == "global"      ? !v.local
                      : which == "trainable" ? v.trainable
                                             : v.local;
    if (keep) out.append(VariableToPython(v));
  }
  return out;
}

ops::Variable FindVariable(const GraphBuilder& g, const std::string& name) {
  for (const VariableInfo& v : g.root().variables()) {
    if (v.ref.node == name) return ops::Variable(v);
  }
  ThrowIfError(errors::NotFound("no variable named '", name, "' in this graph"));
  return {};
}

std::vector<ops::Variable> FindVariables(const GraphBuilder& g,
                                         const std::vector<std::string>& names) {
  std::vector<ops::Variable> out;
  for (const std::string& n : names) out.push_back(FindVariable(g, n));
  return out;
}

std::unique_ptr<train::Optimizer> OptimizerFrom(const GraphBuilder& g, const std::string& kind,
                                                const py::dict& p) {
  auto get = [&](const char* key, double fallback) {
    return p.contains(key) ? p[key].cast<double>() : fallback;
  };
  // A tensor learning rate comes as its (node, port).
  auto lr = [&](double fallback) -> train::LearningRate {
    if (!p.contains("learning_rate")) return fallback;
    py::handle v = p["learning_rate"];
    if (!py::isinstance<py::tuple>(v)) return v.cast<double>();
    const auto [node, port] = v.cast<std::pair<std::string, int>>();
    return g.OutputOf(node, port);
  };
  if (kind == "GradientDescent") {
    return std::make_unique<train::GradientDescent>(lr(0));
  }
  if (kind == "Momentum") {
    return std::make_unique<train::Momentum>(
        lr(0), get("momentum", 0), p.contains("use_nesterov") && p["use_nesterov"].cast<bool>());
  }
  if (kind == "Adam") {
    return std::make_unique<train::Adam>(lr(0.001), get("beta1", 0.9), get("beta2", 0.999),
                                         get("epsilon", 1e-8));
  }
  if (kind == "Adagrad") {
    return std::make_unique<train::Adagrad>(lr(0), get("initial_accumulator_value", 0.1));
  }
  if (kind == "RMSProp") {
    return std::make_unique<train::RMSProp>(lr(0), get("decay", 0.9), get("momentum", 0),
                                            get("epsilon", 1e-10));
  }
  if (kind == "Ftrl") {
    return std::make_unique<train::Ftrl>(
        lr(0),
        train::FtrlOptions{.learning_rate_power = get("learning_rate_power", -0.5),
                           .initial_accumulator_value = get("initial_accumulator_value", 0.1),
                           .l1 = get("l1_regularization_strength", 0),
                           .l2 = get("l2_regularization_strength", 0),
                           .l2_shrinkage = get("l2_shrinkage_regularization_strength", 0)});
  }
  ThrowIfError(errors::InvalidArgument(
      "no optimizer '", kind, "' (GradientDescent, Momentum, Adam, Adagrad, RMSProp, Ftrl)"));
  return nullptr;
}

namespace {

py::bytes Serialize(const GraphBuilder& g, bool text) {
  GraphDef graph = g.ToGraphDef();
  ThrowIfError(Graph::Build(graph, g.root().registry()).status());
  StripDefaultAttrs(g.root().registry(), graph);
  return py::bytes(SerializeGraph(graph, text ? GraphFormat::kText : GraphFormat::kBinary));
}

py::list Nodes(const GraphBuilder& g) {
  py::list out;
  for (int id = 0; id < g.num_nodes(); ++id) {
    const NodeDef& n = g.root().node(id);
    out.append(py::make_tuple(n.name, n.op, n.inputs, n.device));
  }
  return out;
}

// One node as Nodes gives it; NOT_FOUND when there is no such node.
py::tuple Node(const GraphBuilder& g, const std::string& name) {
  const int id = g.root().FindNode(name);
  if (id < 0) ThrowIfError(errors::NotFound("no node '", name, "' in this graph"));
  const NodeDef& n = g.root().node(id);
  return py::make_tuple(n.name, n.op, n.inputs, n.device);
}

// Every output of `node`; NOT_FOUND when there is no such node.
py::list NodeOutputs(const GraphBuilder& g, const std::string& node) {
  if (g.root().FindNode(node) < 0) {
    ThrowIfError(errors::NotFound("no node '", node, "' in this graph"));
  }
  py::list out;
  for (int port = 0;; ++port) {
    const Output o = g.root().OutputOf(node, port);
    if (!o.valid()) break;
    out.append(OutputToPython(o));
  }
  return out;
}

py::object GetAttr(const GraphBuilder& g, const std::string& node, const std::string& attr) {
  const int id = g.root().FindNode(node);
  if (id < 0) ThrowIfError(errors::NotFound("no node '", node, "' in this graph"));
  const NodeDef& n = g.root().node(id);
  auto it = n.attrs.find(attr);
  if (it == n.attrs.end()) {
    ThrowIfError(errors::NotFound("node '", node, "' (", n.op, ") has no attr '", attr, "'"));
  }
  return AttrToPython(it->second);
}

std::shared_ptr<DeviceFunction> ReplicaDeviceSetter(int ps_tasks, const std::string& ps_device,
                                                    const std::string& worker_device,
                                                    const std::vector<std::string>& ps_ops,
                                                    bool greedy) {
  train::ReplicaDeviceSetterOptions o{.ps_tasks = ps_tasks, .ps_device = ps_device,
                                      .worker_device = worker_device, .ps_ops = ps_ops,
                                      .strategy = greedy ? train::PsStrategy::kGreedyBytes
                                                         : train::PsStrategy::kRoundRobin};
  return std::make_shared<DeviceFunction>(DeviceFunction{train::ReplicaDeviceSetter(o)});
}

// A Python function held by C++ code that may drop it without the GIL.
struct HeldFunction {
  py::function fn;
  ~HeldFunction() {
    py::gil_scoped_acquire gil;
    py::function gone = std::move(fn);
  }
};

// tf.device(fn) with a Python function: `call(name, op, device)` (the
// wrapper framework.py makes of the user's) says the device of each node
// made inside, given the device the enclosing blocks said; "" for none. It
// is called while the node is added, from graph building, which holds the
// GIL; what it raises leaves through the builder unchanged.
std::shared_ptr<DeviceFunction> PythonDeviceFunction(py::function call) {
  auto held = std::make_shared<HeldFunction>(HeldFunction{std::move(call)});
  return std::make_shared<DeviceFunction>(DeviceFunction{[held](const NodeDef& node) {
    return held->fn(node.name, node.op, node.device).cast<std::string>();
  }});
}

}  // namespace

void BindGraphBuilder(py::module_& m) {
  py::class_<DeviceFunction, std::shared_ptr<DeviceFunction>>(m, "DeviceFunction");
  m.def("replica_device_setter", &ReplicaDeviceSetter);
  m.def("python_device_function", &PythonDeviceFunction);
  py::class_<DeviceBlock>(m, "DeviceBlock")
      .def(py::init<std::string, std::shared_ptr<DeviceFunction>>(), py::arg("spec"),
           py::arg("fn"));
  py::class_<BuildContext>(m, "BuildContext")
      .def(py::init<>())
      .def_readwrite("name_scope", &BuildContext::name_scope)
      .def_readwrite("device_blocks", &BuildContext::device_blocks)
      .def_readwrite("control_inputs", &BuildContext::control_inputs)
      .def_readwrite("outside_control_flow", &BuildContext::outside_control_flow);
  py::class_<GraphBuilder> builder(m, "GraphBuilder");
  builder.def(py::init([] { return std::make_unique<GraphBuilder>(ProcessRegistry()); }))
      .def("add_op", &GraphBuilder::AddOp)
      .def("unique_name", &GraphBuilder::UniqueName)
      .def("num_nodes", &GraphBuilder::num_nodes)
      .def("nodes", &Nodes)
      .def("node", &Node)
      .def("get_attr", &GetAttr)
      .def("outputs", &NodeOutputs)
      .def("variable", &AddVariable)
      .def("variable_from", &AddVariableFrom)
      .def("variables", &Variables)
      .def("set_shape", &SetShape)
      .def("global_variables_initializer",
           [](GraphBuilder& g, const BuildContext& ctx, const std::string& name) {
             const Operation op = ops::GlobalVariablesInitializer(g.ScopeFor(ctx, name));
             g.RaiseIfError();
             return op.name;
           })
      .def("global_step",
           [](GraphBuilder& g, const BuildContext& ctx) {
             const ops::Variable v = ops::GlobalStep(g.ScopeFor(ctx));
             g.RaiseIfError();
             return VariableToPython(v.info());
           })
      .def("serialize", &Serialize)
      .def("write", [](const GraphBuilder& g, const std::string& path, bool text) {
        const GraphFormat format = text ? GraphFormat::kText : GraphFormat::kBinary;
        ThrowIfError(WriteGraphFile(g.root(), path, format));
      });
  BindGradients(builder);
  BindControlFlow(builder);
}

}  // namespace tfd::python
