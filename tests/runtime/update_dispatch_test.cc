// Where the executor runs a variable's update when a task's event loop made
// it ready (RunAsync): a small one on the loop itself, since a hand-off to
// the compute pool costs more than the update (an async ps's step is one
// such update), a large one on the pool, so that it does not hold up the
// loop (OpKernel::cheap_up_to_elements). The thread each node ran on comes
// from the step's trace.
#include <catch2/catch.hpp>
#include <boost/asio/thread_pool.hpp>
#include <future>
#include <string>
#include <vector>

#include "common/graph.h"
#include "common/thread_name.h"
#include "daemon/runtime/executor.h"
#include "kernels/register_all.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;

// Elements of an update well within every update's bound, and well past it
// (4 MiB of float32: a layer's worth, milliseconds of the loop).
constexpr int64_t kSmall = 10;
constexpr int64_t kLarge = int64_t{1} << 20;

struct Fixture {
  Fixture() {
    REQUIRE(kernels::RegisterAll(registry).ok());
    env.resources = &resources;
  }
  std::unique_ptr<Executor> Make(GraphDef g) {
    auto graph = Graph::Build(std::move(g), registry);
    INFO(graph.status().ToString());
    REQUIRE(graph.ok());
    auto exec = Executor::Create(std::make_shared<const Graph>(std::move(graph).value()),
                                 {&registry, &env, &pool, kDeviceCpu, "cpu"});
    INFO(exec.status().ToString());
    REQUIRE(exec.ok());
    return std::move(exec).value();
  }
  OpRegistry registry;
  ResourceMgr resources;
  KernelEnv env;
  boost::asio::thread_pool pool{2};
};

// Runs a step as a task's event loop does (RunAsync, then waiting apart),
// traced; the step's stats.
StepStats RunOnLoop(Executor& exec, int64_t step) {
  CancellationManager cm;
  std::promise<std::pair<Status, StepStats>> result;
  exec.RunAsync({.step_id = step, .cancellation = &cm,
                 .deadline = std::chrono::steady_clock::now() + 10s, .trace = true},
                [&](const Status& s, StepStats st) { result.set_value({s, std::move(st)}); });
  auto future = result.get_future();
  REQUIRE(future.wait_for(10s) == std::future_status::ready);
  auto [status, stats] = future.get();
  INFO(status.ToString());
  REQUIRE(status.ok());
  return stats;
}

// The id of the thread node `name` ran on in `stats`.
uint64_t ThreadOf(const StepStats& stats, const std::string& name) {
  for (const auto& node : stats.nodes) {
    if (node.node == name) return node.thread;
  }
  FAIL("node '" << name << "' is not in the step's trace");
  return 0;
}

NodeDef Constant(const std::string& name, Tensor value) {
  const DType dtype = value.dtype();
  return {name, "Const", {}, "", {{"value", std::move(value)}, {"dtype", dtype}}};
}

// The graph that sets variables var, slot1 and slot2 (float32[n]) to 0.5,
// and the one that runs `op` on them once per step, as node "update".
struct UpdateGraphs {
  GraphDef init, update;
};

UpdateGraphs MakeGraphs(const std::string& op, int64_t n) {
  UpdateGraphs g;
  const std::vector<float> values(static_cast<size_t>(n), 0.5f);
  for (const std::string var : {"var", "slot1", "slot2"}) {
    const NodeDef def{var, "VariableV2", {}, "",
                      {{"shape", PartialShape({n})}, {"dtype", DType::kFloat32},
                       {"shared_name", var}}};
    g.init.nodes.push_back(def);
    g.init.nodes.push_back(Constant(var + "_init", Tensor::FromVector(values, TensorShape({n}))));
    g.init.nodes.push_back({var + "_assign", "Assign", {var, var + "_init"}, "", {}});
    g.update.nodes.push_back(def);
  }
  g.update.nodes.push_back(Constant("grad", Tensor::FromVector(values, TensorShape({n}))));
  g.update.nodes.push_back(Constant("s", Tensor::Scalar(0.5f)));
  std::vector<std::string> inputs;
  if (op == "AssignAdd" || op == "AssignSub") inputs = {"var", "grad"};
  if (op == "ApplyGradientDescent") inputs = {"var", "s", "grad"};
  if (op == "ApplyMomentum") inputs = {"var", "slot1", "s", "grad", "s"};
  if (op == "ApplyAdam") inputs = {"var", "slot1", "slot2", "s", "s", "s", "s", "s", "s", "grad"};
  REQUIRE_FALSE(inputs.empty());
  g.update.nodes.push_back({"update", op, inputs, "", {}});
  return g;
}

TEST_CASE("an update of a few elements runs on the loop that made it ready, a large one on the pool") {
  for (const std::string op :
       {"AssignAdd", "AssignSub", "ApplyGradientDescent", "ApplyMomentum", "ApplyAdam"}) {
    for (const int64_t n : {kSmall, kLarge}) {
      INFO(op << " of " << n << " elements");
      Fixture f;
      const UpdateGraphs graphs = MakeGraphs(op, n);
      RunOnLoop(*f.Make(graphs.init), 1);
      auto exec = f.Make(graphs.update);
      // Every step the same: the choice is made per run, from the inputs.
      for (int64_t step = 2; step <= 4; ++step) {
        const StepStats stats = RunOnLoop(*exec, step);
        if (n == kSmall) {
          CHECK(ThreadOf(stats, "update") == ThisThreadId());
        } else {
          CHECK(ThreadOf(stats, "update") != ThisThreadId());
        }
      }
    }
  }
}

TEST_CASE("an update whose value comes from another variable goes to the pool until read") {
  // Its size is not known until the executor reads the variable, when the
  // node runs: too late to choose the thread by it.
  Fixture f;
  UpdateGraphs graphs = MakeGraphs("AssignAdd", kSmall);
  graphs.update.nodes.back().inputs = {"var", "slot1"};
  RunOnLoop(*f.Make(graphs.init), 1);
  auto exec = f.Make(graphs.update);
  CHECK(ThreadOf(RunOnLoop(*exec, 2), "update") != ThisThreadId());
}

}  // namespace
}  // namespace tfd
