// What the binding files over GraphBuilder share (graph_bindings.cc defines
// them): variables as Python sees them, initializer and optimizer specs as
// Python names them, and variables looked up by name.
//
//   auto opt = OptimizerFrom(g, "Adagrad", params);   // raises for an unknown kind
//   ops::Variable v = FindVariable(g, "emb/part_0");
//
// Thread-safety: none; called with the GIL held, as GraphBuilder.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

#include "api/optimizers.h"
#include "api/variables.h"
#include "python/src/graph_builder.h"

namespace tfd::python {

// (ref output, value output, initializer node, device, trainable).
pybind11::tuple VariableToPython(const VariableInfo& v);

// ("zeros"|"ones"|"constant"|"normal"|"truncated_normal"|"uniform", a, b,
// seed or None) or ("value", array) as the C++ initializer.
ops::Initializer InitializerFrom(const pybind11::tuple& spec);

// The variable whose VariableV2 node is `name`; NOT_FOUND otherwise.
ops::Variable FindVariable(const GraphBuilder& g, const std::string& name);
std::vector<ops::Variable> FindVariables(const GraphBuilder& g,
                                         const std::vector<std::string>& names);

// An optimizer kind ("GradientDescent", "Momentum", "Adam", "Adagrad",
// "RMSProp", "Ftrl") and its hyperparameters as the C++ optimizer;
// INVALID_ARGUMENT naming the kinds otherwise. Each hyperparameter is a
// number; the learning rate may also be a (node, port) output of `g`.
std::unique_ptr<train::Optimizer> OptimizerFrom(const GraphBuilder& g, const std::string& kind,
                                                const pybind11::dict& params);

// The gradients and optimizers (gradient_bindings.cc), as methods of the
// GraphBuilder class.
void BindGradients(pybind11::class_<GraphBuilder>& builder);

// tf.cond and tf.while_loop (control_flow_bindings.cc), as methods of the
// GraphBuilder class.
void BindControlFlow(pybind11::class_<GraphBuilder>& builder);

// The partitioned variables, embedding lookups and string hashing
// (embedding_bindings.cc), as functions of the module.
void BindEmbeddings(pybind11::module_& m);

// The graph's random seed, TF1's seed rule and dropout (random_bindings.cc),
// as functions of the module.
void BindRandom(pybind11::module_& m);

// TensorBoard's event files (tfd.summary.FileWriter) and TFRecord's
// checksum (summary_bindings.cc), as the module's.
void BindSummaries(pybind11::module_& m);

}  // namespace tfd::python
