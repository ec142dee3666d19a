// While loops that span tasks (partition_loops.h): the control loops
// partitioning adds, and the partitions of such loops run together in one
// process, meeting in one LocalRendezvous as tasks meet over the network,
// with exact results; rendezvous keys that name the frame and iteration;
// and what is still refused, naming the node (a loop on two tasks without a
// LoopCond: while_loop_test.cc).
#include <boost/asio/thread_pool.hpp>
#include <catch2/catch.hpp>
#include <future>
#include <map>

#include "api/control_flow.h"
#include "common/graph_io.h"
#include "daemon/runtime/executor.h"
#include "daemon/runtime/frame_rendezvous.h"
#include "daemon/runtime/local_rendezvous.h"
#include "daemon/runtime/partition.h"
#include "kernels/register_all.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;
using ops::Input;

const char kWorker[] = "/job:worker/replica:0/task:0/device:CPU:0";
const char kPs[] = "/job:ps/replica:0/task:0/device:CPU:0";
const char kWorkerTask[] = "/job:worker/replica:0/task:0";
const char kPsTask[] = "/job:ps/replica:0/task:0";

const OpRegistry& Ops() {
  static OpRegistry registry;
  static const Status status = kernels::RegisterAll(registry);
  REQUIRE(status.ok());
  return registry;
}

StatusOr<std::map<std::string, GraphDef>> Partition(const Scope& root) {
  TFD_RETURN_IF_ERROR(root.status());
  TFD_ASSIGN_OR_RETURN(Graph g, Graph::Build(root.ToGraphDef(), Ops()));
  std::vector<std::string> devices;
  for (const Graph::Node& node : g.nodes()) devices.push_back(node.def.device);
  return PartitionGraph(g, devices);
}

// Runs one step of every partition at once, each on its own executor, as
// the tasks of a cluster would; the fetches are the worker's _Retvals.
struct PartsRunner {
  PartsRunner() : pool(4) { env.resources = &resources; }

  StatusOr<std::vector<Tensor>> Run(const std::map<std::string, GraphDef>& parts, size_t fetches,
                                    std::chrono::milliseconds timeout = 60s) {
    std::vector<std::unique_ptr<Executor>> execs;
    for (const auto& [task, def] : parts) {
      TFD_ASSIGN_OR_RETURN(Graph g, Graph::Build(def, Ops()));
      TFD_ASSIGN_OR_RETURN(auto exec, Executor::Create(std::make_shared<const Graph>(std::move(g)),
                                                       {&Ops(), &env, &pool, kDeviceCpu, task}));
      execs.push_back(std::move(exec));
    }
    ++step;
    LocalRendezvous rendezvous;
    // One per partition, as each task has its own: a partition ends at its
    // own deadline (one that fails leaves the others to theirs).
    std::vector<CancellationManager> cms(execs.size());
    std::vector<CallFrame> frames(execs.size());
    std::vector<std::future<Status>> done;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    const size_t worker = std::distance(parts.begin(), parts.find(kWorkerTask));
    for (size_t i = 0; i < execs.size(); ++i) {
      // Only the worker's partition holds the _Retvals: a slot no node
      // fills is an error of the step (executor.h).
      frames[i].retvals.resize(i == worker ? fetches : 0);
      // Shared with the callback, which may still be in set_value when the
      // future wakes this thread.
      auto promise = std::make_shared<std::promise<Status>>();
      done.push_back(promise->get_future());
      execs[i]->RunAsync({.step_id = step,
                          .frame = &frames[i],
                          .rendezvous = &rendezvous,
                          .cancellation = &cms[i],
                          .deadline = deadline},
                         [promise](const Status& s, StepStats) { promise->set_value(s); });
    }
    Status status;
    for (auto& f : done) {
      // The step's deadline ends every partition; this one only guards the test.
      if (f.wait_until(deadline + 30s) != std::future_status::ready) {
        FAIL("a partition outlived its step's deadline by 30 s");
      }
      if (Status s = f.get(); status.ok() && !s.ok()) status = s;
    }
    rendezvous.Cleanup(step);
    TFD_RETURN_IF_ERROR(status);
    return frames.at(worker).retvals;
  }

  ResourceMgr resources;
  KernelEnv env;
  boost::asio::thread_pool pool;
  int64_t step = 0;
};

void Fetch(const Scope& root, const std::vector<Output>& outputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    root.WithDevice(kWorker).AddOperation("_Retval", {outputs[i]},
                                          {{"index", static_cast<int64_t>(i)}});
  }
}

const NodeDef* Find(const GraphDef& def, const std::string& name) {
  for (const NodeDef& n : def.nodes) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

int64_t I64(const Tensor& t) { return t.data<int64_t>()[0]; }

// (i, sum) = (1, 0); while i <= n: (i + 1, sum + k * i), the sum on the ps
// with k a constant from the ps: sum = k n (n + 1) / 2.
std::vector<Output> SumOnPs(const Scope& root, int64_t n, int parallel) {
  const Scope worker = root.WithDevice(kWorker);
  const Output k = ops::Const(root.WithOpName("k").WithDevice(kPs), Input(int64_t{3}));
  const Output limit = ops::Const(worker, Input(n));
  return ops::WhileLoop(
      worker,
      [&](const Scope& c, const std::vector<Output>& v) { return ops::LessEqual(c, v[0], limit); },
      [&](const Scope& b, const std::vector<Output>& v) {
        const Scope ps = b.WithDevice(kPs);
        return std::vector<Output>{ops::Add(b, v[0], Input(int64_t{1})),
                                   ops::Add(ps.WithOpName("on_ps"), v[1], ops::Mul(ps, v[0], k))};
      },
      {ops::Const(worker, Input(int64_t{1})), ops::Const(worker, Input(int64_t{0}))},
      {.parallel_iterations = parallel});
}

TEST_CASE("a loop whose body runs partly on a ps gives exact results, iteration by iteration") {
  PartsRunner runner;
  for (int64_t n : {0, 1, 7, 300}) {
    for (int parallel : {1, 10}) {
      INFO("n " << n << " parallel_iterations " << parallel);
      const Scope root = Scope::NewRootScope(Ops());
      Fetch(root, SumOnPs(root, n, parallel));
      auto parts = Partition(root);
      INFO(parts.status().ToString());
      REQUIRE(parts.ok());
      auto got = runner.Run(*parts, 2);
      INFO(got.status().ToString());
      REQUIRE(got.ok());
      CHECK(I64((*got)[0]) == n + 1);
      CHECK(I64((*got)[1]) == 3 * n * (n + 1) / 2);
    }
  }
}

TEST_CASE("the ps gets a control loop driven by the LoopCond, which triggers its receives") {
  const Scope root = Scope::NewRootScope(Ops());
  Fetch(root, SumOnPs(root, 5, 10));
  auto parts = Partition(root);
  INFO(parts.status().ToString());
  REQUIRE(parts.ok());
  const GraphDef& ps = parts->at(kPsTask);
  const NodeDef* enter = Find(ps, "_control_loop1/enter");
  const NodeDef* merge = Find(ps, "_control_loop1/merge");
  const NodeDef* sw = Find(ps, "_control_loop1/switch");
  const NodeDef* next = Find(ps, "_control_loop1/next");
  REQUIRE((enter && merge && sw && next));
  CHECK(enter->op == "Enter");
  CHECK(std::get<std::string>(enter->attrs.at("frame_name")) == "while");
  CHECK(std::get<int64_t>(enter->attrs.at("parallel_iterations")) == 10);
  CHECK(enter->inputs == std::vector<std::string>{"_control_loop1/start"});
  CHECK(merge->inputs == std::vector<std::string>{"_control_loop1/enter", "_control_loop1/next"});
  CHECK(next->inputs == std::vector<std::string>{"_control_loop1/switch:1"});
  // The predicate is the LoopCond's value, received in every iteration.
  REQUIRE(sw->inputs.size() == 2);
  const NodeDef* pred = Find(ps, sw->inputs[1]);
  REQUIRE(pred != nullptr);
  CHECK(pred->op == "_Recv");
  CHECK(std::get<std::string>(pred->attrs.at("tensor_name")) == "while/LoopCond:0");
  // Every receive inside the loop on the ps waits on the control loop's Merge.
  int receives = 0;
  for (const NodeDef& n : ps.nodes) {
    if (n.op != "_Recv") continue;
    ++receives;
    CHECK(n.inputs == std::vector<std::string>{"^_control_loop1/merge"});
  }
  CHECK(receives >= 3);  // the predicate, v[0], v[1] (and the pivot's control edge)
  // The constant k crosses no edge: its Enter moved to the ps beside its consumer.
  for (const NodeDef& n : parts->at(kWorkerTask).nodes) {
    if (n.op == "_Send") CHECK(n.inputs[0].find("k") != 0);
  }
  // Every partition is a valid graph on its own.
  for (const auto& [task, def] : *parts) {
    auto g = Graph::Build(def, Ops());
    INFO(task << ": " << g.status().ToString());
    CHECK(g.ok());
  }
}

TEST_CASE("the LoopCond's task gets no control loop when it only sends inside the loop") {
  // The ps computes from each iteration's counter and keeps the result to
  // itself (as an update of a variable there would): nothing comes back.
  const Scope root = Scope::NewRootScope(Ops());
  const Scope worker = root.WithDevice(kWorker);
  auto out = ops::WhileLoop(
      worker,
      [](const Scope& c, const std::vector<Output>& v) {
        return ops::Less(c, v[0], Input(int64_t{20}));
      },
      [](const Scope& b, const std::vector<Output>& v) {
        ops::Mul(b.WithOpName("on_ps").WithDevice(kPs), v[0], v[0]);
        return std::vector<Output>{ops::Add(b, v[0], Input(int64_t{1}))};
      },
      {ops::Const(worker, Input(int64_t{0}))});
  Fetch(root, out);
  auto parts = Partition(root);
  INFO(parts.status().ToString());
  REQUIRE(parts.ok());
  CHECK(Find(parts->at(kWorkerTask), "_control_loop1/merge") == nullptr);
  CHECK(Find(parts->at(kPsTask), "_control_loop1/merge") != nullptr);
  PartsRunner runner;
  auto got = runner.Run(*parts, 1);
  INFO(got.status().ToString());
  REQUIRE(got.ok());
  CHECK(I64((*got)[0]) == 20);
}

TEST_CASE("a loop inside a loop, its body on a ps, gives exact results") {
  // for i in 0..outer-1: for j in 0..i-1: total += i * j (the product on the ps)
  const int64_t outer = 6;
  const Scope root = Scope::NewRootScope(Ops());
  const Scope worker = root.WithDevice(kWorker);
  auto result = ops::WhileLoop(
      worker,
      [&](const Scope& c, const std::vector<Output>& v) {
        return ops::Less(c, v[0], Input(outer));
      },
      [&](const Scope& b, const std::vector<Output>& v) {
        const Output i = v[0];
        auto inner = ops::WhileLoop(
            b, [&](const Scope& c, const std::vector<Output>& w) { return ops::Less(c, w[0], i); },
            [&](const Scope& bb, const std::vector<Output>& w) {
              return std::vector<Output>{
                  ops::Add(bb, w[0], Input(int64_t{1})),
                  ops::Add(bb.WithDevice(kPs), w[1], ops::Mul(bb.WithDevice(kPs), w[0], i))};
            },
            {ops::Const(b, Input(int64_t{0})), v[1]});
        return std::vector<Output>{ops::Add(b, i, Input(int64_t{1})), inner[1]};
      },
      {ops::Const(worker, Input(int64_t{0})), ops::Const(worker, Input(int64_t{0}))});
  Fetch(root, {result[1]});
  auto parts = Partition(root);
  INFO(parts.status().ToString());
  REQUIRE(parts.ok());
  // The ps runs the outer loop's control loop too, to enter the inner one
  // once per outer iteration.
  CHECK(Find(parts->at(kPsTask), "_control_loop1/merge") != nullptr);
  CHECK(Find(parts->at(kPsTask), "_control_loop2/enter")->inputs ==
        std::vector<std::string>{"_control_loop1/merge"});
  PartsRunner runner;
  auto got = runner.Run(*parts, 1);
  INFO(got.status().ToString());
  REQUIRE(got.ok());
  int64_t want = 0;
  for (int64_t i = 0; i < outer; ++i) {
    for (int64_t j = 0; j < i; ++j) want += i * j;
  }
  CHECK(I64((*got)[0]) == want);
}

TEST_CASE("a loop across tasks that never ends is stopped by the step's deadline") {
  const Scope root = Scope::NewRootScope(Ops());
  const Scope worker = root.WithDevice(kWorker);
  auto out = ops::WhileLoop(
      worker,
      [](const Scope& c, const std::vector<Output>& v) {
        return ops::GreaterEqual(c, v[0], Input(int64_t{0}));
      },
      [](const Scope& b, const std::vector<Output>& v) {
        return std::vector<Output>{ops::Add(b.WithDevice(kPs), v[0], Input(int64_t{1}))};
      },
      {ops::Const(worker, Input(int64_t{0}))});
  Fetch(root, out);
  auto parts = Partition(root);
  REQUIRE(parts.ok());
  PartsRunner runner;
  auto got = runner.Run(*parts, 1, 300ms);
  CHECK(got.status().code() == Code::kDeadlineExceeded);
}

// Records the keys it is handed.
struct KeyLog : Rendezvous {
  void SendAsync(int64_t, const std::string& key, const Tensor&, CancellationManager&,
                 SendCallback done) override {
    keys.push_back(key);
    done(OkStatus());
  }
  void RecvAsync(int64_t, const std::string& key, CancellationManager&,
                 RecvCallback done) override {
    keys.push_back(key);
    done(Tensor::Scalar(true));
  }
  std::vector<std::string> keys;
};

TEST_CASE("transfers inside a loop key on the frame and iteration; others keep their key") {
  KeyLog log;
  CancellationManager cm;
  FrameRendezvous framed(log, 0xabc, 12);
  framed.SendAsync(1, "a;b;x:0", Tensor::Scalar(1.0f), cm, [](const Status&) {});
  framed.RecvAsync(1, "a;b;x:0", cm, [](StatusOr<Tensor>) {});
  CHECK(log.keys ==
        std::vector<std::string>{"a;b;x:0;0000000000000abc:12", "a;b;x:0;0000000000000abc:12"});
  // A frame instance's id depends on its name and on the iteration of its
  // parent it was entered in, and is never the root's.
  const uint64_t outer = FrameInstanceId(0, 0, "while");
  CHECK(outer != 0);
  CHECK(outer == FrameInstanceId(0, 0, "while"));
  CHECK(FrameInstanceId(outer, 1, "while/body/while") !=
        FrameInstanceId(outer, 2, "while/body/while"));
  CHECK(FrameInstanceId(0, 0, "while_1") != outer);
}

TEST_CASE("a loop's NextIteration feeding two tasks is refused naming it") {
  const Scope root = Scope::NewRootScope(Ops());
  const Scope worker = root.WithDevice(kWorker);
  Output x = ops::Const(worker, Input(int64_t{0}));
  Output enter = worker.AddOperation("Enter", {x}, {{"frame_name", std::string("f")}}).output(0);
  Output merge = worker.AddOperation("Merge", {enter, enter}).output(0);
  Output enter_ps =
      root.WithDevice(kPs).AddOperation("Enter", {x}, {{"frame_name", std::string("f")}}).output(0);
  Output on_ps = root.WithDevice(kPs).AddOperation("Merge", {enter_ps, enter_ps}).output(0);
  Output pred = worker.AddOperation("LoopCond", {ops::Less(worker, merge, merge)}).output(0);
  Operation sw = worker.AddOperation("Switch", {merge, pred});
  worker.AddOperation("Exit", {sw.output(0)});
  Output next = worker.WithOpName("next")
                    .AddOperation("NextIteration", {ops::Add(worker, sw.output(1), sw.output(1))})
                    .output(0);
  root.UpdateInput(merge.node, 1, next);
  root.UpdateInput(on_ps.node, 1, next);
  auto parts = Partition(root);
  INFO(parts.status().ToString());
  CHECK(parts.status().code() == Code::kInvalidArgument);
  CHECK(parts.status().node() == "next");
  CHECK(parts.status().message().find("feeds nodes on 2 tasks") != std::string::npos);
}

}  // namespace
}  // namespace tfd
