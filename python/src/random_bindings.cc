// Random seeds and dropout from Python: tfd.set_random_seed, tfd.get_seed
// and tfd.nn.dropout over api/random_seed.h and api/ops.h, so that a Python
// graph's random ops are seeded by the same rule as a C++ one
// (python/tfd/random_seed.py keeps TF1's names).
#include <optional>
#include <string>
#include <utility>

#include <pybind11/stl.h>

#include "api/ops.h"
#include "api/random_seed.h"
#include "python/src/builder_helpers.h"

namespace tfd::python {

namespace py = pybind11;

namespace {

// (seed, seed2) for a random op about to be added to `g`.
std::pair<int64_t, int64_t> GetSeed(const GraphBuilder& g, std::optional<int64_t> op_seed) {
  const ops::OpSeeds s = ops::GetSeed(g.root(), op_seed);
  return {s.seed, s.seed2};
}

// tf.nn.dropout: `name`, when given, is a name scope over the "dropout/..."
// nodes ops::Dropout adds.
py::tuple Dropout(GraphBuilder& g, const BuildContext& ctx, const std::string& name,
                  const std::pair<std::string, int>& x, double rate,
                  std::optional<int64_t> seed) {
  const Scope scope = name.empty() ? g.ScopeFor(ctx) : g.ScopeFor(ctx).WithName(name);
  const Output y = ops::Dropout(scope, g.OutputOf(x.first, x.second), rate, seed);
  g.RaiseIfError();
  return OutputToPython(y);
}

}  // namespace

void BindRandom(py::module_& m) {
  m.def("set_random_seed", [](const GraphBuilder& g, std::optional<int64_t> seed) {
    g.root().SetRandomSeed(seed);
  });
  m.def("random_seed", [](const GraphBuilder& g) { return g.root().random_seed(); });
  m.def("get_seed", &GetSeed);
  m.def("dropout", &Dropout);
}

}  // namespace tfd::python
