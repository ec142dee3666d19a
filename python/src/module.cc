// _tfd: the compiled half of the Python package (tfd/__init__.py is the
// other). It describes every op
// to the Python side (which generates a function per op from it, tfd/ops.py),
// and binds the graph builder and the sessions.
#include <memory>
#include <string>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "common/op_registry.h"
#include "daemon/rpc/tls.h"
#include "python/src/builder_helpers.h"
#include "python/src/convert.h"
#include "python/src/errors.h"
#include "python/src/graph_builder.h"
#include "python/src/local_runner.h"
#include "python/src/monitored.h"
#include "python/src/registry.h"
#include "python/src/remote_runner.h"
#include "tfd_version.h"

namespace tfd::python {

namespace py = pybind11;

namespace {

py::dict ArgToPython(const ArgDef& a) {
  py::dict d;
  d["name"] = a.name;
  d["type"] = a.type == DType::kInvalid ? "" : std::string(DTypeName(a.type));
  d["type_attr"] = a.type_attr;
  d["number_attr"] = a.number_attr;
  d["type_list_attr"] = a.type_list_attr;
  d["is_ref"] = a.is_ref;
  return d;
}

py::dict AttrDefToPython(const AttrDef& a) {
  py::dict d;
  d["name"] = a.name;
  d["type"] = a.type;
  d["has_default"] = a.default_value.has_value();
  d["default"] = a.default_value ? AttrToPython(*a.default_value) : py::none();
  py::list allowed;
  for (DType t : a.allowed_types) allowed.append(std::string(DTypeName(t)));
  d["allowed"] = allowed;
  return d;
}

// Every op of the registry, as the Python generator needs it.
py::list OpDefs() {
  py::list out;
  for (const std::string& name : ProcessRegistry().OpNames()) {
    const OpDef& def = ProcessRegistry().Find(name)->def;
    py::dict d;
    d["name"] = def.name;
    py::list inputs, outputs, attrs;
    for (const ArgDef& a : def.inputs) inputs.append(ArgToPython(a));
    for (const ArgDef& a : def.outputs) outputs.append(ArgToPython(a));
    for (const AttrDef& a : def.attrs) attrs.append(AttrDefToPython(a));
    d["inputs"] = inputs;
    d["outputs"] = outputs;
    d["attrs"] = attrs;
    d["stateful"] = def.stateful;
    d["doc"] = def.doc;
    out.append(d);
  }
  return out;
}

void BindSessions(py::module_& m) {
  py::class_<LocalRunner>(m, "LocalRunner")
      .def(py::init([](const std::vector<std::string>& io_dirs) {
        return std::make_unique<LocalRunner>(ProcessRegistry(), io_dirs);
      }))
      .def("run", &LocalRunner::Run)
      .def("run_traced", &LocalRunner::RunTraced)
      .def("close", &LocalRunner::Close);
  py::class_<RemoteRunner>(m, "RemoteRunner")
      .def(py::init([](const std::string& target, const std::string& token_file,
                       const std::string& cert, const std::string& key, const std::string& ca,
                       double timeout_s) {
        return std::make_unique<RemoteRunner>(target, token_file, TlsFiles{cert, key, ca},
                                              timeout_s);
      }))
      .def("run", &RemoteRunner::Run)
      .def("run_traced", &RemoteRunner::RunTraced)
      .def("make_callable", &RemoteRunner::MakeCallable, py::arg("graph"), py::arg("feeds"),
           py::arg("fetches"), py::arg("targets"), py::arg("input_pipeline") = false)
      .def("run_callable", &RemoteRunner::RunCallable)
      .def("save_checkpoint", &RemoteRunner::SaveCheckpoint)
      .def("restore_checkpoint", &RemoteRunner::RestoreCheckpoint)
      .def("wait_initialized", &RemoteRunner::WaitInitialized)
      .def("close", &RemoteRunner::Close)
      .def_property_readonly("task", &RemoteRunner::task);
  py::class_<MonitoredRunner>(m, "MonitoredRunner")
      .def(py::init([](const GraphBuilder& graph, py::dict o, py::object before_run,
                       py::object after_run, py::object on_checkpoint) {
        MonitoredOptions options;
        options.target = o["target"].cast<std::string>();
        options.token_file = o["token_file"].cast<std::string>();
        options.tls = TlsFiles{o["cert"].cast<std::string>(), o["key"].cast<std::string>(),
                               o["ca"].cast<std::string>()};
        options.timeout_s = o["timeout"].cast<double>();
        options.step_timeout_s = o["step_timeout"].cast<double>();
        options.init_timeout_s = o["init_timeout"].cast<double>();
        if (!o["is_chief"].is_none()) options.chief = o["is_chief"].cast<bool>();
        options.last_step = o["last_step"].cast<int64_t>();
        options.checkpoint_steps = o["checkpoint_steps"].cast<int64_t>();
        options.checkpoint_secs = o["checkpoint_secs"].cast<double>();
        options.summary_dir = o["summary_dir"].cast<std::string>();
        options.summary_steps = o["summary_steps"].cast<int64_t>();
        options.max_recoveries = o["max_recoveries"].cast<int>();
        return std::make_unique<MonitoredRunner>(graph, std::move(options), before_run, after_run,
                                                 on_checkpoint);
      }))
      .def("step", &MonitoredRunner::Step)
      .def("close", &MonitoredRunner::Close)
      .def("stop_requested", &MonitoredRunner::stop_requested)
      .def("check_thread", &MonitoredRunner::CheckThread)
      .def_property_readonly("task", &MonitoredRunner::task)
      .def_property_readonly("chief", &MonitoredRunner::chief);
}

}  // namespace

PYBIND11_MODULE(_tfd, m) {
  m.doc() = "The compiled core of the tfd package; use `import tfd`.";
  m.attr("__version__") = TFD_VERSION;
  m.def("set_error_classes", &SetErrorClasses);
  m.def("op_defs", &OpDefs);
  BindGraphBuilder(m);
  BindEmbeddings(m);
  BindRandom(m);
  BindSessions(m);
  BindSummaries(m);
}

}  // namespace tfd::python
