// Parameter placement: which ps task each variable lands on, and that what
// belongs to a variable (initializer, snapshot, optimizer slots) follows it.
#include "api/placement.h"

#include <catch2/catch.hpp>

#include "api/optimizers.h"
#include "tests/api/api_test_util.h"

namespace tfd {
namespace {

using ops::Initializer;
using ops::Variable;

std::string DeviceOf(const Scope& s, const std::string& node) {
  const int id = s.FindNode(node);
  INFO("node " << node);
  REQUIRE(id >= 0);
  return s.node(id).device;
}

TEST_CASE("round robin puts v1, v2, v3 on ps 0, 1, 0 and the rest on the worker") {
  const Scope root = Scope::NewRootScope(testing::AllOps())
                         .WithDeviceFunction(train::ReplicaDeviceSetter({.ps_tasks = 2}));
  Variable v1(root.WithOpName("v1"), {2}, DType::kFloat32, Initializer::Zeros());
  Variable v2(root.WithOpName("v2"), {2}, DType::kFloat32, Initializer::Zeros());
  Variable v3(root.WithOpName("v3"), {2}, DType::kFloat32, Initializer::Zeros());
  const Output sum = ops::AddN(root.WithOpName("sum"), {v1, v2, v3});
  REQUIRE(root.ok());
  CHECK(v1.device() == "/job:ps/task:0");
  CHECK(v2.device() == "/job:ps/task:1");
  CHECK(v3.device() == "/job:ps/task:0");
  CHECK(DeviceOf(root, "v2") == "/job:ps/task:1");
  // The variable's own nodes stay beside it; compute goes to the worker.
  CHECK(DeviceOf(root, "v2/read") == "/job:ps/task:1");
  CHECK(DeviceOf(root, "v2/Assign") == "/job:ps/task:1");
  CHECK(DeviceOf(root, "v2/Initializer/Fill") == "/job:ps/task:1");
  CHECK(DeviceOf(root, "sum") == "/job:worker");
}

TEST_CASE("a local variable stays on the scope's device, outside the global initializer") {
  const Scope root = Scope::NewRootScope(testing::AllOps())
                         .WithDeviceFunction(train::ReplicaDeviceSetter({.ps_tasks = 2}));
  Variable shared(root.WithOpName("shared"), {2}, DType::kFloat32, Initializer::Zeros());
  Variable mine(root.WithOpName("mine").WithDevice("/job:worker"), {}, DType::kInt64,
                Initializer::Zeros(), ops::VariableOptions{.local = true});
  const Operation init = ops::GlobalVariablesInitializer(root.WithOpName("init"));
  REQUIRE(root.ok());
  CHECK(DeviceOf(root, "shared") == "/job:ps/task:0");
  CHECK(DeviceOf(root, "mine") == "/job:worker");
  CHECK_FALSE(mine.trainable());
  REQUIRE(ops::GlobalVariables(root).size() == 1);
  CHECK(ops::GlobalVariables(root)[0].name() == "shared");
  REQUIRE(ops::LocalVariables(root).size() == 1);
  CHECK(ops::LocalVariables(root)[0].name() == "mine");
  const NodeDef& init_node = root.node(root.FindNode("init"));
  CHECK(init_node.inputs == std::vector<std::string>{"^shared/Assign"});
}

TEST_CASE("round robin in the classic two-ps model splits weights from biases") {
  const Scope root = Scope::NewRootScope(testing::AllOps())
                         .WithDeviceFunction(train::ReplicaDeviceSetter({.ps_tasks = 2}));
  Variable w1(root.WithOpName("w1"), {784, 100}, DType::kFloat32, Initializer::Zeros());
  Variable b1(root.WithOpName("b1"), {100}, DType::kFloat32, Initializer::Zeros());
  Variable w2(root.WithOpName("w2"), {100, 10}, DType::kFloat32, Initializer::Zeros());
  Variable b2(root.WithOpName("b2"), {10}, DType::kFloat32, Initializer::Zeros());
  CHECK(w1.device() == w2.device());
  CHECK(b1.device() == b2.device());
  CHECK(w1.device() != b1.device());
}

TEST_CASE("the size-balanced strategy spreads the weights over both ps tasks") {
  const Scope root = Scope::NewRootScope(testing::AllOps())
                         .WithDeviceFunction(train::ReplicaDeviceSetter(
                             {.ps_tasks = 2, .strategy = train::PsStrategy::kGreedyBytes}));
  Variable w1(root.WithOpName("w1"), {784, 100}, DType::kFloat32, Initializer::Zeros());
  Variable b1(root.WithOpName("b1"), {100}, DType::kFloat32, Initializer::Zeros());
  Variable w2(root.WithOpName("w2"), {100, 10}, DType::kFloat32, Initializer::Zeros());
  Variable b2(root.WithOpName("b2"), {10}, DType::kFloat32, Initializer::Zeros());
  REQUIRE(root.ok());
  CHECK(w1.device() != w2.device());
  // Greedy by bytes: the big weight alone on one task, the rest on the other.
  CHECK(w1.device() == "/job:ps/task:0");
  CHECK(b1.device() == "/job:ps/task:1");
  CHECK(w2.device() == "/job:ps/task:1");
  CHECK(b2.device() == "/job:ps/task:1");
  const NodeDef& w1_node = root.node(root.FindNode("w1"));
  CHECK(train::VariableBytes(w1_node) == 784 * 100 * 4);
}

TEST_CASE("an explicit device request wins over the setter's choice, part by part") {
  const Scope root = Scope::NewRootScope(testing::AllOps())
                         .WithDeviceFunction(train::ReplicaDeviceSetter({.ps_tasks = 3}));
  Variable pinned(root.WithDevice("/task:2").WithOpName("pinned"), {1}, DType::kFloat32,
                  Initializer::Zeros());
  const Output x = ops::Const(root.WithDevice("/job:worker/task:1").WithOpName("x"), 1.0f);
  const Output y = ops::Const(root.WithDevice("/cpu:0").WithOpName("y"), 1.0f);
  REQUIRE(root.ok());
  CHECK(pinned.device() == "/job:ps/task:2");
  CHECK(DeviceOf(root, x.node) == "/job:worker/task:1");
  CHECK(DeviceOf(root, y.node) == "/job:worker/device:CPU:0");
}

TEST_CASE("optimizer slots and updates are colocated with their variable") {
  const Scope root = Scope::NewRootScope(testing::AllOps())
                         .WithDeviceFunction(train::ReplicaDeviceSetter({.ps_tasks = 2}));
  Variable step = ops::GlobalStep(root);
  Variable w(root.WithOpName("w"), {3}, DType::kFloat32, Initializer::Ones());
  Variable b(root.WithOpName("b"), {3}, DType::kFloat32, Initializer::Ones());
  const Output loss = ops::Sum(root, ops::Mul(root, ops::Add(root, w, b), w), 0);
  const Operation train = train::Adam(0.1).Minimize(root.WithOpName("train"), loss, step);
  INFO(root.status().ToString());
  REQUIRE(root.ok());
  CHECK(step.device() == "/job:ps/task:0");
  CHECK(w.device() == "/job:ps/task:1");
  CHECK(b.device() == "/job:ps/task:0");
  CHECK(DeviceOf(root, "w/Adam") == w.device());
  CHECK(DeviceOf(root, "w/Adam_1") == w.device());
  CHECK(DeviceOf(root, "b/Adam") == b.device());
  CHECK(DeviceOf(root, "train/update_w/ApplyAdam") == w.device());
  CHECK(DeviceOf(root, "beta1_power") == w.device());
  CHECK(DeviceOf(root, "train") == step.device());
  // The gradient computation runs on the worker.
  const GraphDef g = root.ToGraphDef();
  int gradient_nodes = 0;
  for (const NodeDef& n : g.nodes) {
    if (n.name.rfind("gradients/", 0) != 0) continue;
    ++gradient_nodes;
    CHECK(n.device == "/job:worker");
  }
  CHECK(gradient_nodes > 0);
}

}  // namespace
}  // namespace tfd
