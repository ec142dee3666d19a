// The gradients and optimizers of a Python GraphBuilder: tfd.gradients,
// Optimizer.compute_gradients / apply_gradients / minimize,
// SyncReplicasOptimizer, and the densifying of a tfd.IndexedSlices.
//
// A gradient crosses to Python as
//   None                                     no gradient
//   ("dense", output)                        a tensor
//   ("sparse", values, indices, dense_shape) TF's IndexedSlices (outputs)
// where an output is OutputToPython's tuple; and comes back the same way,
// with (node, port) pairs in place of the outputs.
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/stl.h>

#include "api/optimizers.h"
#include "api/sync_replicas.h"
#include "common/gradients.h"
#include "python/src/builder_helpers.h"
#include "python/src/errors.h"
#include "python/src/graph_builder.h"

namespace tfd::python {

namespace py = pybind11;

namespace {

using OutputRef = std::pair<std::string, int>;

py::object GradientToPython(const Output& dense, const IndexedSlices& sparse) {
  if (sparse.valid()) {
    return py::make_tuple("sparse", OutputToPython(sparse.values), OutputToPython(sparse.indices),
                          OutputToPython(sparse.dense_shape));
  }
  if (dense.valid()) return py::make_tuple("dense", OutputToPython(dense));
  return py::none();
}

// A gradient as Python hands it back (the module comment's forms).
train::GradAndVar GradAndVarFrom(const GraphBuilder& g, py::handle spec, const std::string& var) {
  train::GradAndVar gv{Output(), FindVariable(g, var)};
  if (spec.is_none()) return gv;
  auto output = [&](py::handle ref) {
    const auto r = ref.cast<OutputRef>();
    return g.OutputOf(r.first, r.second);
  };
  const auto t = spec.cast<py::tuple>();
  const std::string kind = t[0].cast<std::string>();
  if (kind == "dense" && t.size() == 2) {
    gv.grad = output(t[1]);
  } else if (kind == "sparse" && t.size() == 4) {
    gv.sparse = IndexedSlices{output(t[1]), output(t[2]), output(t[3])};
  } else {
    ThrowIfError(errors::InvalidArgument("the gradient of variable '", var, "' is ",
                                         py::repr(spec).cast<std::string>(),
                                         ", not a tensor or an IndexedSlices"));
  }
  return gv;
}

using PythonGradsAndVars = std::vector<std::pair<py::object, std::string>>;

std::vector<train::GradAndVar> GradsAndVarsFrom(const GraphBuilder& g,
                                                const PythonGradsAndVars& gv) {
  std::vector<train::GradAndVar> pairs;
  for (const auto& [grad, var] : gv) pairs.push_back(GradAndVarFrom(g, grad, var));
  return pairs;
}

ops::Variable GlobalStepOrNone(const GraphBuilder& g, const std::string& name) {
  return name.empty() ? ops::Variable() : FindVariable(g, name);
}

std::vector<Output> OutputsOf(const GraphBuilder& g, const std::vector<OutputRef>& refs) {
  std::vector<Output> out;
  for (const auto& [node, port] : refs) out.push_back(g.OutputOf(node, port));
  return out;
}

// tf.gradients: a gradient that arrives as rows (an x read only through
// gathers) stays an IndexedSlices, as TF1's.
py::list Gradients(GraphBuilder& g, const BuildContext& ctx, const std::vector<OutputRef>& ys,
                   const std::vector<OutputRef>& xs, const std::vector<OutputRef>& grad_ys) {
  const std::vector<Gradient> dx = ValueOrThrow(AddGradientsKeepSparse(
      g.ScopeFor(ctx), OutputsOf(g, ys), OutputsOf(g, xs), OutputsOf(g, grad_ys)));
  g.RaiseIfError();
  py::list out;
  for (const Gradient& d : dx) out.append(GradientToPython(d.dense, d.sparse));
  return out;
}

py::list ComputeGradients(GraphBuilder& g, const BuildContext& ctx, const std::string& kind,
                          const py::dict& params, const OutputRef& loss,
                          const std::vector<std::string>& var_list) {
  auto opt = OptimizerFrom(g, kind, params);
  const Output y = g.OutputOf(loss.first, loss.second);
  auto pairs =
      ValueOrThrow(opt->ComputeGradients(g.ScopeFor(ctx), y, FindVariables(g, var_list)));
  g.RaiseIfError();
  py::list out;
  for (const train::GradAndVar& gv : pairs) {
    out.append(py::make_tuple(GradientToPython(gv.grad, gv.sparse), gv.var.name()));
  }
  return out;
}

std::string ApplyGradients(GraphBuilder& g, const BuildContext& ctx, const std::string& name,
                           const std::string& kind, const py::dict& params,
                           const PythonGradsAndVars& gv, const std::string& global_step) {
  auto opt = OptimizerFrom(g, kind, params);
  const Operation op = opt->ApplyGradients(g.ScopeFor(ctx, name), GradsAndVarsFrom(g, gv),
                                           GlobalStepOrNone(g, global_step));
  g.RaiseIfError();
  return op.name;
}

// tf.train.SyncReplicasOptimizer: the C++ SyncReplicas over the optimizer
// `kind`. `loss` set: Minimize; else ApplyGradients of `gv`. Returns the
// replica's train op (the chief's step and the rest are named by
// api/train_signature.h).
std::string SyncReplicasUpdate(GraphBuilder& g, const BuildContext& ctx, const std::string& name,
                               const std::string& kind, const py::dict& params,
                               int replicas_to_aggregate, int total_replicas,
                               const std::optional<OutputRef>& loss, const PythonGradsAndVars& gv,
                               const std::string& global_step) {
  auto opt = OptimizerFrom(g, kind, params);
  train::SyncReplicas sync(*opt, {.replicas_to_aggregate = replicas_to_aggregate,
                                  .total_replicas = total_replicas});
  const Scope scope = g.ScopeFor(ctx, name);
  const ops::Variable step = GlobalStepOrNone(g, global_step);
  const Operation op =
      loss ? sync.Minimize(scope, g.OutputOf(loss->first, loss->second), step)
           : sync.ApplyGradients(scope, GradsAndVarsFrom(g, gv), step);
  g.RaiseIfError();
  return op.name;
}

std::string Minimize(GraphBuilder& g, const BuildContext& ctx, const std::string& name,
                     const std::string& kind, const py::dict& params, const OutputRef& loss,
                     const std::string& global_step, const std::vector<std::string>& var_list) {
  auto opt = OptimizerFrom(g, kind, params);
  const Operation op = opt->Minimize(g.ScopeFor(ctx, name), g.OutputOf(loss.first, loss.second),
                                     GlobalStepOrNone(g, global_step), FindVariables(g, var_list));
  g.RaiseIfError();
  return op.name;
}

// tf.convert_to_tensor of an IndexedSlices: the dense tensor it stands for.
py::tuple DensifySlices(GraphBuilder& g, const BuildContext& ctx, const OutputRef& values,
                        const OutputRef& indices, const OutputRef& dense_shape) {
  const Output dense = Densify(
      g.ScopeFor(ctx), IndexedSlices{g.OutputOf(values.first, values.second),
                                     g.OutputOf(indices.first, indices.second),
                                     g.OutputOf(dense_shape.first, dense_shape.second)});
  g.RaiseIfError();
  return OutputToPython(dense);
}

}  // namespace

void BindGradients(py::class_<GraphBuilder>& builder) {
  builder.def("gradients", &Gradients)
      .def("compute_gradients", &ComputeGradients)
      .def("apply_gradients", &ApplyGradients)
      .def("minimize", &Minimize)
      .def("sync_replicas_update", &SyncReplicasUpdate)
      .def("densify", &DensifySlices);
}

}  // namespace tfd::python
