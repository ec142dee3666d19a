// Shared by the api tests: a registry with every op, an in-process session
// over a scope's graph, and the finite-difference gradient check.
//
//   ApiEnv env;
//   Scope root = env.Root();
//   ... build ...
//   auto out = env.Run(root, {{"x", x}}, {"y"});
//
//   CheckGradients("Tanh", [](const Scope& s, const std::vector<Output>& x) {
//     return ops::Tanh(s, x[0]);
//   }, {RandomTensor({2, 3}, 1)});
#pragma once

#include <boost/asio/thread_pool.hpp>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "api/ops.h"
#include "common/op_registry.h"
#include "common/resource_mgr.h"
#include "daemon/runtime/local_session.h"

namespace tfd::testing {

// A registry filled by kernels::RegisterAll, built once per test binary.
const OpRegistry& AllOps();

// One task's worth of environment for LocalSession.
class ApiEnv {
 public:
  ApiEnv();
  Scope Root() const { return Scope::NewRootScope(AllOps()); }
  // Creates a session over root's graph (REQUIREs the scope and graph ok).
  std::unique_ptr<LocalSession> Session(const Scope& root);
  // A session with no graph yet, for tests of Create itself.
  std::unique_ptr<LocalSession> EmptySession();
  // Runs fetches/targets in a fresh session over root's graph.
  StatusOr<std::vector<Tensor>> Run(const Scope& root, const LocalSession::Feeds& feeds,
                                    const std::vector<std::string>& fetches,
                                    const std::vector<std::string>& targets = {});
  // The task's resources the sessions share (its variables).
  ResourceMgr& resources() { return resources_; }

 private:
  ResourceMgr resources_;
  KernelEnv env_;
  boost::asio::thread_pool pool_{2};
};

// float64 values in [lo, hi), reproducible from `seed`.
Tensor RandomTensor(const TensorShape& shape, uint32_t seed, double lo = -1, double hi = 1);

// How much of the inputs' shapes the checked graph declares: the gradient
// functions take different paths for known and unknown shapes.
enum class ShapeMode { kKnown, kUnknownDims, kUnknownRank };

using GradTestFn = std::function<Output(const Scope& s, const std::vector<Output>& xs)>;

// Builds y = f(xs) from float64 placeholders fed with `xs`, loss =
// sum(y * w) for fixed random w, and checks AddGradients(loss, xs) against
// central differences of loss at every element of every x. `inputs_checked`
// limits the check to the first n inputs (the rest are fed, not differentiated).
void CheckGradients(const std::string& what, const GradTestFn& f, const std::vector<Tensor>& xs,
                    ShapeMode mode = ShapeMode::kKnown, int inputs_checked = -1);

// CheckGradients in each of the modes given.
void CheckGradientsAllModes(const std::string& what, const GradTestFn& f,
                            const std::vector<Tensor>& xs,
                            std::vector<ShapeMode> modes = {ShapeMode::kKnown,
                                                            ShapeMode::kUnknownDims,
                                                            ShapeMode::kUnknownRank});

}  // namespace tfd::testing
