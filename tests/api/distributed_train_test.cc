// The API end to end on real tfd processes: a model built in C++ with its
// variables spread over two ps tasks, trained from two workers sharing them
// (between-graph replication), as the classic distributed-TF walkthrough.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "api/control_flow.h"
#include "api/optimizers.h"
#include "api/partitioned_variables.h"
#include "api/placement.h"
#include "common/gradients.h"
#include "tests/api/api_test_util.h"
#include "tests/integration/cluster_fixture.h"
#include "tests/util/io_test_util.h"

namespace tfd {
namespace {

using ops::Initializer;
using ops::Variable;

// y = 3x - 2 fitted by w and b with plain SGD; global_step on a ps task.
GraphDef LinearRegression() {
  const Scope root = Scope::NewRootScope(testing::AllOps())
                         .WithDeviceFunction(train::ReplicaDeviceSetter({.ps_tasks = 2}));
  const std::vector<float> xs{-1, -0.5, 0, 0.5, 1, 1.5, 2, 2.5};
  std::vector<float> ys;
  for (float x : xs) ys.push_back(3 * x - 2);
  const Output x = ops::Const(root, Tensor::FromVector<float>(xs, TensorShape{8, 1}));
  const Output y = ops::Const(root, Tensor::FromVector<float>(ys, TensorShape{8, 1}));
  Variable step = ops::GlobalStep(root);
  Variable w(root.WithOpName("w"), {1, 1}, DType::kFloat32, Initializer::Constant(0.5));
  Variable b(root.WithOpName("b"), {1}, DType::kFloat32, Initializer::Zeros());
  const Output err = ops::Sub(root, ops::Add(root, ops::MatMul(root, x, w), b), y);
  const Output loss = ops::Mean(root.WithOpName("loss"), ops::Square(root, err), {0, 1});
  ops::ScalarSummary(root, "loss", loss);
  train::GradientDescent(0.1).Minimize(root.WithOpName("train"), loss, step);
  ops::GlobalVariablesInitializer(root);
  INFO(root.status().ToString());
  REQUIRE(root.ok());
  return root.ToGraphDef();
}

TEST_CASE("two workers train one model whose variables live on two ps tasks") {
  testing::LocalCluster cluster({{"ps", 2}, {"worker", 2}});
  REQUIRE(cluster.StartAll().ok());
  const GraphDef graph = LinearRegression();

  auto chief = cluster.Connect("worker", 0);
  REQUIRE(chief.ok());
  Status s = (*chief)->CreateSession(graph);
  INFO(s.ToString());
  REQUIRE(s.ok());
  REQUIRE((*chief)->Run({}, {}, {"init"}, {}).ok());
  for (int i = 0; i < 150; ++i) {
    auto r = (*chief)->Run({}, {}, {"train"}, {});
    INFO(r.status().ToString());
    REQUIRE(r.ok());
  }
  auto out = (*chief)->Run({}, {"summaries/loss", "global_step/read"}, {}, {.trace = true});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK(out->fetches[0].scalar<float>() < 1e-3f);
  CHECK(out->fetches[1].scalar<int64_t>() == 150);
  std::map<std::string, std::string> where;
  for (const auto& n : out->stats.nodes) where[n.node] = n.device;
  CHECK(where["global_step/read"] == "/job:ps/replica:0/task:0/device:CPU:0");
  CHECK(where["loss"] == "/job:worker/replica:0/task:0/device:CPU:0");

  // The second worker submits the same graph and trains the same variables:
  // global_step, kept on ps 0, counts both workers' steps.
  auto other = cluster.Connect("worker", 1);
  REQUIRE(other.ok());
  REQUIRE((*other)->CreateSession(graph).ok());
  for (int i = 0; i < 10; ++i) REQUIRE((*other)->Run({}, {}, {"train"}, {}).ok());
  auto step = (*other)->Run({}, {"global_step/read", "w/read"}, {}, {.trace = true});
  REQUIRE(step.ok());
  CHECK(step->fetches[0].scalar<int64_t>() == 160);
  CHECK(step->fetches[1].scalar<float>() == Approx(3.0f).margin(0.05));
  for (const auto& n : step->stats.nodes) {
    if (n.node == "w/read") CHECK(n.device == "/job:ps/replica:0/task:1/device:CPU:0");
  }
}

// A cond on the worker whose true branch updates a variable on the ps (its
// AssignAdd is colocated with the variable): taken, the update runs there;
// not taken, the dead value crosses to the ps and the update does not run.
TEST_CASE("a cond whose branch runs on another task runs it only when taken") {
  testing::LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.StartAll().ok());
  const Scope root = Scope::NewRootScope(testing::AllOps());
  Variable count(root.WithOpName("count").WithDevice("/job:ps/task:0"), {}, DType::kFloat32,
                 Initializer::Zeros());
  const Scope worker = root.WithDevice("/job:worker/task:0");
  const Output pred = ops::Placeholder(worker.WithOpName("pred"), DType::kBool, PartialShape({}));
  std::string update;  // the AssignAdd's node
  const Output y = ops::Cond(
      worker, pred, {ops::Const(worker, 1.0f)},
      [&](const Scope& s, const std::vector<Output>& in) {
        const Output added = ops::AssignAdd(s, count.ref(), in[0]);
        update = added.node;
        return std::vector<Output>{added};
      },
      [](const Scope& s, const std::vector<Output>& in) {
        return std::vector<Output>{ops::Neg(s, in[0])};
      })[0];
  ops::GlobalVariablesInitializer(root);
  REQUIRE(root.ok());
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  REQUIRE((*client)->CreateSession(root.ToGraphDef()).ok());
  REQUIRE((*client)->Run({}, {}, {"init"}, {}).ok());
  const std::vector<bool> preds{true, false, false, true, false};
  float expected = 0;
  for (bool p : preds) {
    INFO("pred " << p);
    auto out = (*client)->Run({{"pred", Tensor::Scalar(p)}}, {y.name()}, {}, {.trace = true});
    INFO(out.status().ToString());
    REQUIRE(out.ok());
    if (p) expected += 1;
    CHECK(out->fetches[0].scalar<float>() == (p ? expected : -1.0f));
    bool ran = false;  // a dead node leaves no trace: it did not run
    for (const auto& n : out->stats.nodes) {
      if (n.node != update) continue;
      ran = true;
      CHECK(n.device == "/job:ps/replica:0/task:0/device:CPU:0");
    }
    CHECK(ran == p);
  }
  auto after = (*client)->Run({}, {"count/read"}, {}, {});
  REQUIRE(after.ok());
  CHECK(after->fetches[0].scalar<float>() == 2.0f);
  CHECK(update.find("cond/true/") != std::string::npos);
}

// A loop on one task of a cluster, started from a variable on another: the
// variable's value crosses once, before the loop, and the loop's frames live
// on the worker alone.
TEST_CASE("a while loop on a worker sums from a ps variable's value") {
  testing::LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.StartAll().ok());
  const Scope root = Scope::NewRootScope(testing::AllOps());
  Variable start(root.WithOpName("start").WithDevice("/job:ps/task:0"), {}, DType::kInt64,
                 Initializer::Constant(100));
  const Scope worker = root.WithDevice("/job:worker/task:0");
  const Output n = ops::Placeholder(worker.WithOpName("n"), DType::kInt64, PartialShape({}));
  const std::vector<Output> r = ops::WhileLoop(
      worker, [&](const Scope& c, const std::vector<Output>& v) { return ops::LessEqual(c, v[0], n); },
      [](const Scope& b, const std::vector<Output>& v) {
        return std::vector<Output>{ops::Add(b, v[0], int64_t{1}), ops::Add(b, v[1], v[0])};
      },
      {ops::Const(worker, int64_t{1}), ops::Identity(worker, start.value())});
  ops::GlobalVariablesInitializer(root);
  INFO(root.status().ToString());
  REQUIRE(root.ok());
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  REQUIRE((*client)->CreateSession(root.ToGraphDef()).ok());
  REQUIRE((*client)->Run({}, {}, {"init"}, {}).ok());
  for (int64_t v : {0, 10, 1000}) {
    INFO("n " << v);
    auto out = (*client)->Run({{"n", Tensor::Scalar(v)}}, {r[1].name()}, {}, {});
    INFO(out.status().ToString());
    REQUIRE(out.ok());
    CHECK(out->fetches[0].scalar<int64_t>() == 100 + v * (v + 1) / 2);
  }
}

const char kPsCpu[] = "/job:ps/replica:0/task:0/device:CPU:0";

// counter = (i, acc); while i < n: add 1 to `count` on the ps, read it back
// there, acc += what was read. The loop's LoopCond is on the worker; the
// update and the read, colocated with the variable, run on the ps in every
// iteration, which the ps learns from the worker's predicate.
std::vector<Output> CountOnPs(const Scope& root, const Variable& count) {
  const Scope worker = root.WithDevice("/job:worker/task:0");
  const Output n = ops::Placeholder(worker.WithOpName("n"), DType::kInt64, PartialShape({}));
  return ops::WhileLoop(
      worker, [&](const Scope& c, const std::vector<Output>& v) { return ops::Less(c, v[0], n); },
      [&](const Scope& b, const std::vector<Output>& v) {
        const Output added = ops::AssignAdd(b.WithOpName("add"), count.ref(), 1.0f);
        const Output read = ops::Identity(
            b.WithOpName("read").WithDevice("/job:ps/task:0").WithControlDependencies({added}),
            count.ref());
        // The next iteration's update waits for this one's read.
        return std::vector<Output>{ops::Add(b.WithControlDependencies({read}), v[0], int64_t{1}),
                                   ops::Add(b, v[1], read)};
      },
      {ops::Const(worker, int64_t{0}), ops::Const(worker, 0.0f)});
}

TEST_CASE("a loop on a worker updates and reads a ps variable in every iteration") {
  testing::LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.StartAll().ok());
  const Scope root = Scope::NewRootScope(testing::AllOps());
  Variable count(root.WithOpName("count").WithDevice("/job:ps/task:0"), {}, DType::kFloat32,
                 Initializer::Zeros());
  const Output acc = CountOnPs(root, count)[1];
  ops::GlobalVariablesInitializer(root);
  INFO(root.status().ToString());
  REQUIRE(root.ok());
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  REQUIRE((*client)->CreateSession(root.ToGraphDef()).ok());
  REQUIRE((*client)->Run({}, {}, {"init"}, {}).ok());
  int64_t moved = 0;
  for (int64_t n : {5, 0, 30}) {
    INFO("n " << n);
    auto out = (*client)->Run({{"n", Tensor::Scalar(n)}}, {acc.name()}, {}, {.trace = true});
    INFO(out.status().ToString());
    REQUIRE(out.ok());
    // Iteration k reads moved + k: the variable afresh, after its update.
    double want = 0;
    for (int64_t k = 1; k <= n; ++k) want += static_cast<double>(moved + k);
    moved += n;
    CHECK(out->fetches[0].scalar<float>() == static_cast<float>(want));
    auto after = (*client)->Run({}, {"count/read"}, {}, {});
    REQUIRE(after.ok());
    CHECK(after->fetches[0].scalar<float>() == static_cast<float>(moved));
    int updates = 0;  // traced kernels: the AssignAdd ran once per iteration, on the ps
    for (const auto& node : out->stats.nodes) {
      if (node.node != "while/body/add") continue;
      ++updates;
      CHECK(node.device == kPsCpu);
    }
    CHECK(updates == n);
  }
}

// The forward loop multiplies on the ps, so it and its gradient loop both
// span the tasks: h = h0 * w**4 elementwise, loss = mean(h * y).
TEST_CASE("the gradient of a loop that multiplies by a ps variable on the ps matches float64") {
  testing::LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.StartAll().ok());
  const std::vector<double> h0{0.5, -1.0, 2.0}, w0{1.1, 0.9, -0.7}, y{0.3, -0.2, 0.1};
  const int64_t steps = 4;
  auto f32 = [](const std::vector<double>& v) {
    return Tensor::FromVector<float>(std::vector<float>(v.begin(), v.end()), TensorShape{3});
  };
  const Scope root = Scope::NewRootScope(testing::AllOps());
  Variable w(root.WithOpName("w").WithDevice("/job:ps/task:0"), {3}, DType::kFloat32,
             Initializer::Value(f32(w0)));
  const Scope worker = root.WithDevice("/job:worker/task:0");
  const Output wv = w.value();
  const Output h = ops::WhileLoop(
      worker,
      [&](const Scope& c, const std::vector<Output>& v) { return ops::Less(c, v[0], steps); },
      [&](const Scope& b, const std::vector<Output>& v) {
        return std::vector<Output>{
            ops::Add(b, v[0], int64_t{1}),
            ops::Mul(b.WithOpName("scale").WithDevice("/job:ps/task:0"), v[1], wv)};
      },
      {ops::Const(worker, int64_t{0}), ops::Const(worker, f32(h0))})[1];
  const Output loss = ops::Mean(worker.WithOpName("loss"),
                                ops::Mul(worker, h, ops::Const(worker, f32(y))), {0});
  auto grads = AddGradients(worker, {loss}, {w.ref()});
  INFO(grads.status().ToString());
  REQUIRE(grads.ok());
  ops::GlobalVariablesInitializer(root);
  INFO(root.status().ToString());
  REQUIRE(root.ok());
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  REQUIRE((*client)->CreateSession(root.ToGraphDef()).ok());
  REQUIRE((*client)->Run({}, {}, {"init"}, {}).ok());
  auto out = (*client)->Run({}, {"loss", (*grads)[0].name()}, {}, {.trace = true});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  double want_loss = 0;
  for (size_t j = 0; j < 3; ++j) want_loss += y[j] * h0[j] * std::pow(w0[j], steps) / 3;
  CHECK(out->fetches[0].scalar<float>() == Approx(want_loss).epsilon(1e-5));
  const Tensor& g = out->fetches[1];
  REQUIRE(g.num_elements() == 3);
  for (size_t j = 0; j < 3; ++j) {
    INFO("w[" << j << "]");
    const double want = y[j] * h0[j] * steps * std::pow(w0[j], steps - 1) / 3;
    CHECK(g.data<float>()[j] == Approx(want).epsilon(1e-5));
  }
  bool scaled_on_ps = false;  // the loop did span the tasks
  for (const auto& node : out->stats.nodes) {
    if (node.node == "while/body/scale") scaled_on_ps = node.device == kPsCpu;
  }
  CHECK(scaled_on_ps);
}

// A loop whose predicate never fails, reading a ps variable in every
// iteration: the step's deadline ends it on both tasks, and both run the
// next step.
TEST_CASE("a loop across tasks that never ends meets the step's deadline; the next step runs") {
  testing::LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.StartAll().ok());
  const Scope root = Scope::NewRootScope(testing::AllOps());
  Variable count(root.WithOpName("count").WithDevice("/job:ps/task:0"), {}, DType::kFloat32,
                 Initializer::Zeros());
  const Output acc = CountOnPs(root, count)[1];
  ops::GlobalVariablesInitializer(root);
  REQUIRE(root.ok());
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  REQUIRE((*client)->CreateSession(root.ToGraphDef()).ok());
  REQUIRE((*client)->Run({}, {}, {"init"}, {}).ok());
  // Once through, so that the runaway step finds its partitions registered.
  REQUIRE((*client)->Run({{"n", Tensor::Scalar(int64_t{1})}}, {acc.name()}, {}, {}).ok());
  const int64_t forever = std::numeric_limits<int64_t>::max();
  auto runaway = (*client)->Run({{"n", Tensor::Scalar(forever)}}, {acc.name()}, {},
                                {.timeout = std::chrono::milliseconds(1000)});
  INFO(runaway.status().ToString());
  CHECK(runaway.status().code() == Code::kDeadlineExceeded);
  auto before = (*client)->Run({}, {"count/read"}, {}, {});
  REQUIRE(before.ok());
  const float moved = before->fetches[0].scalar<float>();
  CHECK(moved > 0);  // it did run, across the tasks, until stopped
  auto next = (*client)->Run({{"n", Tensor::Scalar(int64_t{3})}}, {acc.name()}, {}, {});
  INFO(next.status().ToString());
  REQUIRE(next.ok());
  CHECK(next->fetches[0].scalar<float>() == 3 * moved + 6);
  auto after = (*client)->Run({}, {"count/read"}, {}, {});
  REQUIRE(after.ok());
  CHECK(after->fetches[0].scalar<float>() == moved + 3);
}

// A recurrent step on a worker whose weight lives on a ps: the loop and its
// gradient loop (stacks included) run on the worker, the weight's value
// crosses before the loop and its summed gradient after, to the update on the ps.
TEST_CASE("a worker trains a ps variable through a while loop: the loss falls") {
  testing::LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.StartAll().ok());
  const Scope root = Scope::NewRootScope(testing::AllOps());
  Variable w(root.WithOpName("w").WithDevice("/job:ps/task:0"), {3, 3}, DType::kFloat32,
             Initializer::RandomNormal(0.8, 5));
  const Scope worker = root.WithDevice("/job:worker/task:0");
  const Output h0 =
      ops::Const(worker, Tensor::FromVector<float>({0.5f, -0.3f, 0.8f}, TensorShape{1, 3}));
  const Output y =
      ops::Const(worker, Tensor::FromVector<float>({0.3f, -0.2f, 0.1f}, TensorShape{1, 3}));
  const Output wv = w.value();
  const Output h = ops::WhileLoop(
      worker,
      [](const Scope& c, const std::vector<Output>& v) { return ops::Less(c, v[0], int64_t{4}); },
      [wv](const Scope& b, const std::vector<Output>& v) {
        return std::vector<Output>{ops::Add(b, v[0], int64_t{1}),
                                   ops::Tanh(b, ops::MatMul(b, v[1], wv))};
      },
      {ops::Const(worker, int64_t{0}), h0})[1];
  ops::Mean(worker.WithOpName("loss"), ops::Square(worker, ops::Sub(worker, h, y)), {0, 1});
  train::GradientDescent(0.5).Minimize(worker.WithOpName("train"), root.OutputOf("loss", 0));
  ops::GlobalVariablesInitializer(root);
  INFO(root.status().ToString());
  REQUIRE(root.ok());
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  REQUIRE((*client)->CreateSession(root.ToGraphDef()).ok());
  REQUIRE((*client)->Run({}, {}, {"init"}, {}).ok());
  auto first = (*client)->Run({}, {"loss"}, {}, {});
  REQUIRE(first.ok());
  for (int i = 0; i < 60; ++i) {
    auto s = (*client)->Run({}, {}, {"train"}, {});
    INFO(s.status().ToString());
    REQUIRE(s.ok());
  }
  auto last = (*client)->Run({}, {"loss"}, {}, {});
  REQUIRE(last.ok());
  const float before = first->fetches[0].scalar<float>(), after = last->fetches[0].scalar<float>();
  INFO("loss " << before << " -> " << after);
  CHECK(after < 0.5f * before);
}

// A 7 x 2 table over `ps_tasks` ps tasks in as many shards, "whole" its
// value read back; initialized with `init`.
GraphDef ShardedTable(int ps_tasks, const ops::Initializer& init) {
  const Scope root = Scope::NewRootScope(testing::AllOps())
                         .WithDeviceFunction(train::ReplicaDeviceSetter({.ps_tasks = ps_tasks}));
  ops::PartitionedVariable emb(root.WithOpName("emb"), {7, 2}, DType::kFloat32, init,
                               ops::FixedSizePartitioner(ps_tasks));
  emb.AsTensor(root.WithOpName("whole").WithDevice("/job:worker"));
  ops::GlobalVariablesInitializer(root);
  INFO(root.status().ToString());
  REQUIRE(root.ok());
  return root.ToGraphDef();
}

// Runs `graph` on worker 0 of `cluster`: init, then restore `restore_step`
// when given; the value of "whole".
Tensor RunTable(testing::LocalCluster& cluster, const GraphDef& graph,
                std::optional<int64_t> restore_step) {
  auto chief = cluster.Connect("worker", 0);
  REQUIRE(chief.ok());
  REQUIRE((*chief)->CreateSession(graph).ok());
  REQUIRE((*chief)->Run({}, {}, {"init"}, {}).ok());
  if (restore_step) {
    auto restored = (*chief)->RestoreCheckpoint(*restore_step, std::chrono::seconds(30));
    INFO(restored.status().ToString());
    REQUIRE(restored.ok());
  }
  auto out = (*chief)->Run({}, {"whole"}, {}, {});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  return out->fetches[0];
}

TEST_CASE("a table saved in two shards on two ps restores into three shards on three ps") {
  testing::TempDir dir;
  std::vector<float> values(14);
  for (size_t i = 0; i < values.size(); ++i) values[i] = 0.5f * static_cast<float>(i) - 3;
  {
    testing::LocalCluster before({{"ps", 2}, {"worker", 1}}, {"--checkpoint-dir=" + dir.path().string()});
    REQUIRE(before.StartAll().ok());
    const Tensor saved = RunTable(
        before, ShardedTable(2, ops::Initializer::Value(Tensor::FromVector(values, {7, 2}))),
        std::nullopt);
    REQUIRE(saved.data<float>()[13] == values[13]);
    auto chief = before.Connect("worker", 0);
    REQUIRE(chief.ok());
    auto s = (*chief)->SaveCheckpoint(5, std::chrono::seconds(30));
    INFO(s.status().ToString());
    REQUIRE(s.ok());
  }
  // The job grows by a ps: the old two restore their shards on start, the
  // new graph's shards take their place, and the cluster restore of the
  // latest step (ps 2, new, has none of its own) fills them.
  testing::LocalCluster after({{"ps", 3}, {"worker", 1}}, {"--checkpoint-dir=" + dir.path().string()});
  REQUIRE(after.StartAll().ok());
  const Tensor whole =
      RunTable(after, ShardedTable(3, ops::Initializer::Zeros()), Client::kLatestCheckpoint);
  REQUIRE(whole.shape() == TensorShape({7, 2}));
  for (size_t i = 0; i < values.size(); ++i) {
    INFO("element " << i);
    CHECK(whole.data<float>()[i] == values[i]);
  }
  // Each task reports its shard's slice, which `tfctl vars list` groups by.
  auto ps2 = after.Connect("ps", 2);
  REQUIRE(ps2.ok());
  auto vars = (*ps2)->ListVariables(std::chrono::seconds(10));
  REQUIRE(vars.ok());
  REQUIRE(vars->size() == 1);
  CHECK((*vars)[0].name == "emb/part_2");
  CHECK((*vars)[0].slice == "emb;7,2;5,2");
}

}  // namespace
}  // namespace tfd
