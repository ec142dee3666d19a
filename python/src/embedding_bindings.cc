// Partitioned variables and embedding lookups from Python: tfd.get_variable
// with a partitioner, tfd.nn.embedding_lookup and embedding_lookup_sparse,
// over api/partitioned_variables.h and api/embedding_ops.h. The Python side
// (python/tfd/embedding_ops.py) keeps the objects; these functions only
// add the nodes and report what they made.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/stl.h>

#include "api/embedding_ops.h"
#include "api/partitioned_variables.h"
#include "python/src/builder_helpers.h"
#include "python/src/convert.h"
#include "python/src/errors.h"

namespace tfd::python {

namespace py = pybind11;

namespace {

using OutputRef = std::pair<std::string, int>;

// ("fixed", num_shards) or ("min_max", max_partitions, min_slice_size,
// bytes_per_string_element), as tfd.fixed_size_partitioner and
// tfd.min_max_variable_partitioner describe themselves.
ops::Partitioner PartitionerFrom(const py::tuple& spec) {
  const std::string kind = spec[0].cast<std::string>();
  if (kind == "fixed") return ops::FixedSizePartitioner(spec[1].cast<int>());
  if (kind == "min_max") {
    return ops::MinMaxVariablePartitioner(spec[1].cast<int>(), spec[2].cast<int64_t>(),
                                          spec[3].cast<int64_t>());
  }
  ThrowIfError(errors::InvalidArgument("unknown partitioner kind '", kind,
                                       "' (fixed, min_max)"));
  return {};
}

// (logical name, [shard variables], [(first_row, rows)]).
py::tuple AddPartitionedVariable(GraphBuilder& g, const BuildContext& ctx,
                                 const std::string& name, py::handle shape,
                                 const std::string& dtype, const py::tuple& init,
                                 const py::tuple& partitioner, bool trainable) {
  const PartialShape partial = ValueOrThrow(ShapeFromPython(shape));
  const auto full = partial.AsTensorShape();
  const auto type = DTypeFromName(dtype);
  if (!full || !type) {
    ThrowIfError(errors::InvalidArgument("partitioned variable '", name,
                                         "' needs a fully known shape and a dtype; got ",
                                         partial.ToString(), " and '", dtype, "'"));
  }
  ops::PartitionedVariable v(g.ScopeFor(ctx, name), *full, *type, InitializerFrom(init),
                             PartitionerFrom(partitioner), {.trainable = trainable});
  g.RaiseIfError();
  py::list shards, rows;
  for (const ops::PartitionedVariable::Shard& s : v.shards()) {
    shards.append(VariableToPython(s.variable.info()));
    rows.append(py::make_tuple(s.first_row, s.rows));
  }
  return py::make_tuple(v.name(), shards, rows);
}

std::vector<Output> OutputsOf(const GraphBuilder& g, const std::vector<OutputRef>& refs) {
  std::vector<Output> out;
  for (const auto& [node, port] : refs) out.push_back(g.OutputOf(node, port));
  return out;
}

ops::SparseTensor SparseFrom(const GraphBuilder& g, const std::vector<OutputRef>& parts) {
  if (parts.size() != 3) {
    ThrowIfError(errors::InvalidArgument("a SparseTensor is (indices, values, dense_shape); got ",
                                         parts.size(), " tensors"));
  }
  const std::vector<Output> o = OutputsOf(g, parts);
  return {o[0], o[1], o[2]};
}

ops::EmbeddingLookupAttrs LookupAttrs(const std::string& strategy,
                                      std::optional<double> max_norm) {
  return {.partition_strategy = strategy, .max_norm = max_norm};
}

py::tuple EmbeddingLookup(GraphBuilder& g, const BuildContext& ctx, const std::string& name,
                          const std::vector<OutputRef>& shards, const OutputRef& ids,
                          const std::string& strategy, std::optional<double> max_norm) {
  const Output out =
      ops::EmbeddingLookup(g.ScopeFor(ctx, name), OutputsOf(g, shards),
                           g.OutputOf(ids.first, ids.second), LookupAttrs(strategy, max_norm));
  g.RaiseIfError();
  return OutputToPython(out);
}

py::tuple EmbeddingLookupSparse(GraphBuilder& g, const BuildContext& ctx,
                                const std::string& name, const std::vector<OutputRef>& shards,
                                const std::vector<OutputRef>& sp_ids,
                                const std::optional<std::vector<OutputRef>>& sp_weights,
                                const std::string& combiner, const std::string& strategy,
                                std::optional<double> max_norm) {
  std::optional<ops::SparseTensor> weights;
  if (sp_weights) weights = SparseFrom(g, *sp_weights);
  const Output out = ops::EmbeddingLookupSparse(g.ScopeFor(ctx, name), OutputsOf(g, shards),
                                                SparseFrom(g, sp_ids), weights, combiner,
                                                LookupAttrs(strategy, max_norm));
  g.RaiseIfError();
  return OutputToPython(out);
}

}  // namespace

void BindEmbeddings(py::module_& m) {
  m.def("partitioned_variable", &AddPartitionedVariable);
  m.def("embedding_lookup", &EmbeddingLookup);
  m.def("embedding_lookup_sparse", &EmbeddingLookupSparse);
}

}  // namespace tfd::python
