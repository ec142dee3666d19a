// TF1's tf.cond and tf.while_loop for Python, over ops::Cond and
// ops::WhileLoop (api/control_flow.h). Each branch, loop condition and
// body is a Python callable the C++ builder calls while it builds:
//
//   fn(name_scope, control_inputs, args) -> [(node, port), ...]
//
// `name_scope` and `control_inputs` are the scope C++ builds that part in
// ("cond/true", after the branch's pivot; "while/body", after the
// iteration's), which the Python side makes its context while `fn` runs, so
// that what `fn` adds belongs to the branch or the loop; `args` are the
// branch's or the iteration's tensors (OutputToPython's tuples). An
// exception `fn` raises leaves through the C++ builder unchanged, the nodes
// added before it staying in the graph, as a failed op's do.
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <pybind11/stl.h>

#include "api/control_flow.h"
#include "python/src/builder_helpers.h"
#include "python/src/convert.h"
#include "python/src/errors.h"
#include "python/src/graph_builder.h"

namespace tfd::python {

namespace py = pybind11;

namespace {

using OutputRef = std::pair<std::string, int>;

py::list OutputsToPython(const std::vector<Output>& outputs) {
  py::list out;
  for (const Output& o : outputs) out.append(OutputToPython(o));
  return out;
}

// Calls `fn` for the part built in `scope`, and reads back the tensors it
// returns.
std::vector<Output> CallPart(const GraphBuilder& g, const py::function& fn, const Scope& scope,
                             const std::vector<Output>& args) {
  const py::object result =
      fn(scope.name_prefix(), scope.control_dependencies(), OutputsToPython(args));
  std::vector<Output> out;
  for (const OutputRef& r : result.cast<std::vector<OutputRef>>()) {
    out.push_back(g.OutputOf(r.first, r.second));
  }
  return out;
}

py::list Cond(GraphBuilder& g, const BuildContext& ctx, const OutputRef& pred,
              const py::function& true_fn, const py::function& false_fn) {
  auto branch = [&g](const py::function& fn) {
    return
        [&g, &fn](const Scope& s, const std::vector<Output>& in) { return CallPart(g, fn, s, in); };
  };
  const std::vector<Output> merged = ops::Cond(g.ScopeFor(ctx), g.OutputOf(pred.first, pred.second),
                                               {}, branch(true_fn), branch(false_fn));
  g.RaiseIfError();
  return OutputsToPython(merged);
}

// `shape_invariants`: one shape (None, or a list of ints and None) per loop
// variable, or an empty list for their own shapes. `maximum_iterations`:
// None, an int, or a tensor's (node, port).
py::list WhileLoop(GraphBuilder& g, const BuildContext& ctx, const py::function& cond,
                   const py::function& body, const std::vector<OutputRef>& loop_vars,
                   int parallel_iterations,
                   const std::optional<std::variant<int64_t, OutputRef>>& maximum_iterations,
                   const py::list& shape_invariants) {
  std::optional<ops::Input> limit;
  if (maximum_iterations) {
    if (const auto* n = std::get_if<int64_t>(&*maximum_iterations)) {
      limit = ops::Input(*n);
    } else {
      const auto& [node, port] = std::get<OutputRef>(*maximum_iterations);
      limit = ops::Input(g.OutputOf(node, port));
    }
  }
  std::vector<Output> vars;
  for (const OutputRef& r : loop_vars) vars.push_back(g.OutputOf(r.first, r.second));
  std::vector<PartialShape> invariants;
  for (py::handle shape : shape_invariants)
    invariants.push_back(ValueOrThrow(ShapeFromPython(shape)));
  auto cond_fn = [&](const Scope& s, const std::vector<Output>& v) {
    std::vector<Output> pred = CallPart(g, cond, s, v);
    if (pred.size() != 1) {
      ThrowIfError(errors::InvalidArgument("the condition of a while loop returns ", pred.size(),
                                           " tensors; it must return one scalar bool"));
    }
    return pred[0];
  };
  auto body_fn = [&](const Scope& s, const std::vector<Output>& v) {
    return CallPart(g, body, s, v);
  };
  const std::vector<Output> exits = ops::WhileLoop(g.ScopeFor(ctx), cond_fn, body_fn, vars,
                                                   {.parallel_iterations = parallel_iterations,
                                                    .maximum_iterations = std::move(limit),
                                                    .shape_invariants = std::move(invariants)});
  g.RaiseIfError();
  return OutputsToPython(exits);
}

}  // namespace

void BindControlFlow(py::class_<GraphBuilder>& builder) {
  builder.def("cond", &Cond).def("while_loop", &WhileLoop);
}

}  // namespace tfd::python
