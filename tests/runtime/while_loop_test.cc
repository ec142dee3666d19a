// While loops in the executor (frames and iterations, loop_frames.h): exact
// results of loops built from Enter / Merge / Switch / LoopCond /
// NextIteration / Exit, iteration state freed as iterations end (bounded by
// parallel_iterations however many iterations run), nested loops, loop
// invariants, a dead loop on the untaken side of a cond, a loop that never
// ends stopped by the step's deadline, Switch, Merge and a traced loop as
// their kernels run them (the executor runs them itself untraced), and graphs with
// malformed loops refused with the node named.
#include <catch2/catch.hpp>

#include <boost/asio/thread_pool.hpp>
#include <future>
#include <map>

#include "api/control_flow.h"
#include "daemon/runtime/executor.h"
#include "daemon/runtime/partition.h"
#include "common/graph_io.h"
#include "kernels/register_all.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;
using ops::Input;

const OpRegistry& Ops() {
  static OpRegistry registry;
  static const Status status = kernels::RegisterAll(registry);
  REQUIRE(status.ok());
  return registry;
}

// Runs the graph of `root` with each of `fetches` handed back through a
// _Retval, on an executor of its own.
struct Runner {
  explicit Runner(int threads = 2) : pool(threads) { env.resources = &resources; }

  StatusOr<std::vector<Tensor>> Run(const Scope& root, const std::vector<Output>& fetches,
                                    Executor::LoopStats* loop_stats = nullptr,
                                    std::chrono::milliseconds timeout = 0ms) {
    for (size_t i = 0; i < fetches.size(); ++i) {
      root.AddOperation("_Retval", {fetches[i]}, {{"index", static_cast<int64_t>(i)}});
    }
    TFD_RETURN_IF_ERROR(root.status());
    TFD_ASSIGN_OR_RETURN(Graph g, Graph::Build(root.ToGraphDef(), Ops()));
    TFD_ASSIGN_OR_RETURN(auto exec, Executor::Create(std::make_shared<const Graph>(std::move(g)),
                                                     {&Ops(), &env, &pool, kDeviceCpu, "cpu"}));
    CallFrame frame;
    frame.retvals.resize(fetches.size());
    CancellationManager cm;
    Executor::RunArgs args{.step_id = 1, .frame = &frame, .cancellation = &cm,
                           .loop_stats = loop_stats};
    if (timeout > 0ms) args.deadline = std::chrono::steady_clock::now() + timeout;
    TFD_RETURN_IF_ERROR(exec->Run(args));
    for (size_t i = 0; i < frame.retvals.size(); ++i) {
      if (!frame.retvals[i].initialized()) {
        return errors::Internal("the step ended without fetch ", i, " (", fetches[i].name(), ")");
      }
    }
    return frame.retvals;
  }

  ResourceMgr resources;
  KernelEnv env;
  boost::asio::thread_pool pool;
};

int64_t I64(const Tensor& t) { return t.data<int64_t>()[0]; }

// (i, sum) = (1, 0); while i <= n: (i + 1, sum + i)
std::vector<Output> SumTo(const Scope& s, const Output& n, ops::WhileOptions options = {}) {
  return ops::WhileLoop(
      s, [&](const Scope& c, const std::vector<Output>& v) { return ops::LessEqual(c, v[0], n); },
      [](const Scope& b, const std::vector<Output>& v) {
        return std::vector<Output>{ops::Add(b, v[0], Input(int64_t{1})), ops::Add(b, v[1], v[0])};
      },
      {ops::Const(s, Input(int64_t{1})), ops::Const(s, Input(int64_t{0}))}, options);
}

TEST_CASE("a while loop sums 1..n exactly, for several n and parallel_iterations") {
  for (int64_t n : {1, 2, 10, 1000}) {
    for (int parallel : {1, 2, 10}) {
      INFO("n " << n << " parallel_iterations " << parallel);
      Runner r;
      const Scope root = Scope::NewRootScope(Ops());
      auto out = SumTo(root, ops::Const(root, Input(n)), {.parallel_iterations = parallel});
      Executor::LoopStats stats;
      auto got = r.Run(root, out, &stats);
      INFO(got.status().ToString());
      REQUIRE(got.ok());
      CHECK(I64((*got)[0]) == n + 1);
      CHECK(I64((*got)[1]) == n * (n + 1) / 2);
      // Iteration n + 1 evaluates the predicate, finds it false and exits.
      CHECK(stats.iterations == n + 1);
      CHECK(stats.peak_live_iterations <= parallel);
    }
  }
}

TEST_CASE("iterations that overlap on pool threads give exact results") {
  for (int run = 0; run < 20; ++run) {
    INFO("run " << run);
    Runner r(4);
    const Scope root = Scope::NewRootScope(Ops());
    std::vector<double> av(64 * 64), bv(64 * 64);
    for (size_t k = 0; k < av.size(); ++k) {
      av[k] = static_cast<double>(k % 7);
      bv[k] = static_cast<double>(k % 5);
    }
    Output a = ops::Const(root, Tensor::FromVector<double>(av, TensorShape{64, 64}));
    Output b = ops::Const(root, Tensor::FromVector<double>(bv, TensorShape{64, 64}));
    const int64_t n = 40;
    // The counter runs ahead; each iteration's MatMul needs only the
    // invariants, so up to parallel_iterations of them run at once.
    auto out = ops::WhileLoop(
        root, [&](const Scope& c, const std::vector<Output>& v) { return ops::Less(c, v[0], Input(n)); },
        [&](const Scope& s, const std::vector<Output>& v) {
          return std::vector<Output>{ops::Add(s, v[0], Input(int64_t{1})),
                                     ops::Add(s, v[1], ops::MatMul(s, a, b))};
        },
        {ops::Const(root, Input(int64_t{0})), ops::ZerosLike(root, ops::MatMul(root, a, b))});
    Output expected = ops::Mul(root, ops::MatMul(root, a, b), Input(static_cast<double>(n)));
    auto got = r.Run(root, {out[1], expected});
    INFO(got.status().ToString());
    REQUIRE(got.ok());
    CHECK(TensorsEqual((*got)[0], (*got)[1]));
  }
}

TEST_CASE("a loop whose predicate is false at once runs no iteration of its body") {
  Runner r;
  const Scope root = Scope::NewRootScope(Ops());
  auto out = SumTo(root, ops::Const(root, Input(int64_t{0})));
  Executor::LoopStats stats;
  auto got = r.Run(root, out, &stats);
  INFO(got.status().ToString());
  REQUIRE(got.ok());
  CHECK(I64((*got)[0]) == 1);
  CHECK(I64((*got)[1]) == 0);
  CHECK(stats.iterations == 1);
}

TEST_CASE("100k iterations run with a bounded number of iterations alive") {
  Runner r;
  const Scope root = Scope::NewRootScope(Ops());
  const int64_t n = 100000;
  auto out = SumTo(root, ops::Const(root, Input(n)), {.parallel_iterations = 4});
  Executor::LoopStats stats;
  auto got = r.Run(root, out, &stats);
  INFO(got.status().ToString());
  REQUIRE(got.ok());
  CHECK(I64((*got)[1]) == n * (n + 1) / 2);
  CHECK(stats.iterations == n + 1);
  // Each iteration's state is freed once it ends: what is alive at once is
  // bounded by parallel_iterations, not by the 100k iterations.
  CHECK(stats.peak_live_iterations <= 4);
  CHECK(stats.peak_live_frames == 1);
}

TEST_CASE("nested loops: the inner loop runs afresh in each outer iteration") {
  Runner r;
  const Scope root = Scope::NewRootScope(Ops());
  // total = sum over i in 1..5 of (sum over j in 1..i of j)
  auto out = ops::WhileLoop(
      root, [](const Scope& c, const std::vector<Output>& v) { return ops::LessEqual(c, v[0], Input(int64_t{5})); },
      [](const Scope& b, const std::vector<Output>& v) {
        std::vector<Output> inner = SumTo(b, v[0]);
        return std::vector<Output>{ops::Add(b, v[0], Input(int64_t{1})), ops::Add(b, v[1], inner[1])};
      },
      {ops::Const(root, Input(int64_t{1})), ops::Const(root, Input(int64_t{0}))});
  Executor::LoopStats stats;
  auto got = r.Run(root, out, &stats);
  INFO(got.status().ToString());
  REQUIRE(got.ok());
  CHECK(I64((*got)[1]) == 1 + 3 + 6 + 10 + 15);
  // 6 outer iterations; inner loops of 2..6 iterations in the first five,
  // and in the sixth, where the outer body is dead, one dead iteration.
  CHECK(stats.iterations == 6 + (2 + 3 + 4 + 5 + 6) + 1);
}

TEST_CASE("a tensor from outside the loop is a loop invariant seen by every iteration") {
  Runner r;
  const Scope root = Scope::NewRootScope(Ops());
  Output step = ops::Const(root.WithOpName("step"), Input(int64_t{7}));
  auto out = ops::WhileLoop(
      root, [](const Scope& c, const std::vector<Output>& v) { return ops::Less(c, v[0], Input(int64_t{10})); },
      [&](const Scope& b, const std::vector<Output>& v) {
        return std::vector<Output>{ops::Add(b, v[0], Input(int64_t{1})), ops::Add(b, v[1], step)};
      },
      {ops::Const(root, Input(int64_t{0})), ops::Const(root, Input(int64_t{0}))});
  GraphDef def = root.ToGraphDef();
  int constant_enters = 0;
  for (const NodeDef& n : def.nodes) {
    if (n.op == "Enter" && std::get<bool>(n.attrs.at("is_constant"))) ++constant_enters;
  }
  // `step` only: the predicate's bound is a constant made inside the loop.
  CHECK(constant_enters == 1);
  auto got = r.Run(root, out);
  INFO(got.status().ToString());
  REQUIRE(got.ok());
  CHECK(I64((*got)[1]) == 70);
}

TEST_CASE("maximum_iterations stops a loop whose predicate still holds") {
  Runner r;
  const Scope root = Scope::NewRootScope(Ops());
  auto out = SumTo(root, ops::Const(root, Input(int64_t{100})), {.maximum_iterations = 4});
  auto got = r.Run(root, out);
  INFO(got.status().ToString());
  REQUIRE(got.ok());
  CHECK(I64((*got)[0]) == 5);
  CHECK(I64((*got)[1]) == 1 + 2 + 3 + 4);
}

TEST_CASE("a loop in the untaken branch of a cond never runs, and the cond still returns") {
  for (bool pred : {true, false}) {
    INFO("pred " << pred);
    Runner r;
    const Scope root = Scope::NewRootScope(Ops());
    Output p = ops::Const(root, Input(pred));
    Output n = ops::Const(root, Input(int64_t{10}));
    Output y = ops::Cond(
        root, p, {n},
        [](const Scope& s, const std::vector<Output>& in) {
          return std::vector<Output>{SumTo(s, in[0])[1]};
        },
        [](const Scope& s, const std::vector<Output>& in) {
          return std::vector<Output>{ops::Add(s, in[0], Input(int64_t{1000}))};
        })[0];
    Executor::LoopStats stats;
    auto got = r.Run(root, {y}, &stats);
    INFO(got.status().ToString());
    REQUIRE(got.ok());
    CHECK(I64((*got)[0]) == (pred ? 55 : 1010));
    // Dead, the loop's frame is entered once, with a dead value, and left.
    CHECK(stats.iterations == (pred ? 11 : 1));
  }
}

// The executor computes Switch and Merge itself outside a traced step
// (Executor::Builtin); they must still do what their kernels do.
TEST_CASE("Merge forwards the live side of a Switch and says which input it was") {
  for (bool pred : {false, true}) {
    INFO("pred " << pred);
    Runner r;
    const Scope root = Scope::NewRootScope(Ops());
    Output x = ops::Const(root, Input(int64_t{7}));
    Operation sw = root.AddOperation("Switch", {x, ops::Const(root, Input(pred))});
    Operation merge = root.AddOperation("Merge", {sw.output(0), sw.output(1)});
    auto got = r.Run(root, {merge.output(0), merge.output(1)});
    INFO(got.status().ToString());
    REQUIRE(got.ok());
    CHECK(I64((*got)[0]) == 7);
    CHECK((*got)[1].dtype() == DType::kInt32);
    CHECK((*got)[1].data<int32_t>()[0] == (pred ? 1 : 0));
  }
}

// A traced step runs every node through its kernel, so that the trace has
// the loop's own nodes too, once per iteration.
TEST_CASE("a traced step lists the loop's control nodes of every iteration") {
  Runner r;
  const Scope root = Scope::NewRootScope(Ops());
  std::vector<Output> sum = SumTo(root, ops::Const(root, Input(int64_t{4})));
  root.AddOperation("_Retval", {sum[1]}, {{"index", int64_t{0}}});
  REQUIRE(root.status().ok());
  auto g = Graph::Build(root.ToGraphDef(), Ops());
  REQUIRE(g.ok());
  auto exec = Executor::Create(std::make_shared<const Graph>(std::move(g).value()),
                               {&Ops(), &r.env, &r.pool, kDeviceCpu, "cpu"});
  REQUIRE(exec.ok());
  CallFrame frame;
  frame.retvals.resize(1);
  CancellationManager cm;
  StepStats stats;
  REQUIRE((*exec)->Run({.step_id = 1, .frame = &frame, .cancellation = &cm, .trace = true}, &stats)
              .ok());
  CHECK(I64(frame.retvals[0]) == 10);
  std::map<std::string, int> runs;  // by op
  for (const NodeExecStats& n : stats.nodes) ++runs[n.op];
  // Two loop variables, five iterations of the predicate, four of the body.
  CHECK(runs["Merge"] == 2 * 5);
  CHECK(runs["Switch"] == 2 * 5);
  CHECK(runs["LoopCond"] == 5);
  CHECK(runs["Identity"] == 2 * 4);
  CHECK(runs["NextIteration"] == 2 * 4);
  CHECK(runs["Enter"] == 2 + 1);  // the loop variables and n, an invariant
  CHECK(runs["Exit"] == 2);       // the live ones: the dead ones do not run
}

// while (true) { i = i + 1 }
std::vector<Output> Forever(const Scope& root) {
  return ops::WhileLoop(
      root, [](const Scope& c, const std::vector<Output>& v) { return ops::Const(c, Input(true)); },
      [](const Scope& b, const std::vector<Output>& v) {
        return std::vector<Output>{ops::Add(b, v[0], Input(int64_t{1}))};
      },
      {ops::Const(root, Input(int64_t{0}))});
}

// The deadline cancels the step through its CancellationManager, as a
// client's cancellation would.
TEST_CASE("a loop that never ends is stopped by the step's deadline") {
  Runner r;
  const Scope root = Scope::NewRootScope(Ops());
  Executor::LoopStats stats;
  auto got = r.Run(root, Forever(root), &stats, 300ms);
  CHECK(got.status().code() == Code::kDeadlineExceeded);
  CHECK(stats.iterations > 1);  // it was looping when the deadline came
}

// A dead control input stops the loop in its first iteration; the loop's
// exit is then dead, and fetching it is an error naming it, not an OK step.
TEST_CASE("a loop stopped by a dead control input fails the fetch of its result, naming it") {
  Runner r;
  const Scope root = Scope::NewRootScope(Ops());
  const std::vector<Output> out = ops::WhileLoop(
      root,
      [](const Scope& c, const std::vector<Output>& v) {
        return ops::Less(c, v[0], Input(int64_t{5}));
      },
      [](const Scope& b, const std::vector<Output>& v) {
        // The untaken side through an Identity: a node, unlike the Switch
        // itself, that is dead, so its control edge carries the deadness.
        Operation sw = b.AddOperation("Switch", {v[0], ops::Const(b, Input(false))});
        const Output untaken = ops::Identity(b, sw.output(1));
        const Scope after = b.WithControlDependencies(std::vector<Output>{untaken});
        return std::vector<Output>{ops::Add(after, v[0], Input(int64_t{1}))};
      },
      {ops::Const(root, Input(int64_t{0}))});
  auto got = r.Run(root, {ops::Identity(root.WithOpName("fetched"), out[0])});
  INFO(got.status().ToString());
  REQUIRE_FALSE(got.ok());
  CHECK(got.status().code() == Code::kInvalidArgument);
  CHECK(got.status().ToString().find("fetched") != std::string::npos);
}

// A step that ends with a fetch slot no node filled is an error, not an OK
// step handing back an empty tensor as the fetch's value.
TEST_CASE("a step that ends without filling a fetch fails") {
  const Scope root = Scope::NewRootScope(Ops());
  root.AddOperation("_Retval", {ops::Const(root, Input(int64_t{3}))},
                    {{"index", int64_t{1}}});
  REQUIRE(root.status().ok());
  auto g = Graph::Build(root.ToGraphDef(), Ops());
  REQUIRE(g.ok());
  ResourceMgr resources;
  KernelEnv env;
  env.resources = &resources;
  boost::asio::thread_pool pool(1);
  auto exec = Executor::Create(std::make_shared<const Graph>(std::move(*g)),
                               {&Ops(), &env, &pool, kDeviceCpu, "cpu"});
  REQUIRE(exec.ok());
  CallFrame frame;
  frame.retvals.resize(2);  // slot 0 has no _Retval
  CancellationManager cm;
  const Status s = (*exec)->Run({.step_id = 1, .frame = &frame, .cancellation = &cm});
  INFO(s.ToString());
  CHECK(s.code() == Code::kInternal);
  CHECK(s.ToString().find("fetch #0") != std::string::npos);
  CHECK(I64(frame.retvals[1]) == 3);
}

TEST_CASE("a cycle that does not pass through a NextIteration -> Merge edge is refused") {
  const Scope root = Scope::NewRootScope(Ops());
  Output a = ops::Const(root.WithOpName("a"), Input(1.0f));
  Output m = root.AddOperation("Merge", {a, a}).output(0);
  Output add = ops::Add(root.WithOpName("add"), m, a);
  root.UpdateInput(m.node, 1, add);
  REQUIRE(root.ok());
  auto g = Graph::Build(root.ToGraphDef(), Ops());
  CHECK(g.status().code() == Code::kInvalidArgument);
  CHECK(g.status().message().find("cycle") != std::string::npos);
  CHECK(g.status().message().find("'add'") != std::string::npos);
}

// Enter -> Merge <-> NextIteration, with the back edge's input text given.
StatusOr<Graph> BackEdgeGraph(const std::string& back, const std::string& next_input) {
  const std::string text = R"g((nodes = [
    (name = "x", op = "Const", attrs = [
       (name = "value", value = (tensor = (dtype = int64, int64Val = [1]))),
       (name = "dtype", value = (type = int64))]),
    (name = "enter", op = "Enter", inputs = ["x"], attrs = [(name = "frame_name", value = (s = "f"))]),
    (name = "merge", op = "Merge", inputs = ["enter", ")g" + back + R"g("]),
    (name = "cast", op = "Cast", inputs = ["merge"], attrs = [(name = "DstT", value = (type = float32))]),
    (name = "next", op = "NextIteration", inputs = [")g" + next_input + R"g("])]))g";
  TFD_ASSIGN_OR_RETURN(GraphDef def, ParseGraph(text, "loop.txt"));
  return Graph::Build(std::move(def), Ops());
}

TEST_CASE("a loop's back edge is checked once its producer is known") {
  CHECK(BackEdgeGraph("next", "merge").ok());
  auto port = BackEdgeGraph("next:1", "merge");
  CHECK(port.status().code() == Code::kInvalidArgument);
  CHECK(port.status().message().find("node 'merge' (Merge): input 1 names output 1") == 0);
  auto dtype = BackEdgeGraph("next", "cast");
  CHECK(dtype.status().code() == Code::kInvalidArgument);
  CHECK(dtype.status().message().find("is float32, expected int64") != std::string::npos);
}

TEST_CASE("a value used in a loop without an Enter is refused naming the node") {
  const Scope root = Scope::NewRootScope(Ops());
  Output outside = ops::Const(root.WithOpName("outside"), Input(int64_t{3}));
  Output x = ops::Const(root, Input(int64_t{0}));
  Output enter = root.AddOperation("Enter", {x}, {{"frame_name", std::string("loop")}}).output(0);
  Output merge = root.AddOperation("Merge", {enter, enter}).output(0);
  Output less = ops::Less(root.WithOpName("less"), merge, outside);
  Operation sw = root.AddOperation("Switch", {merge, root.AddOperation("LoopCond", {less}).output(0)});
  root.AddOperation("Exit", {sw.output(0)});
  Output next = root.AddOperation("NextIteration", {ops::Add(root, sw.output(1), Input(int64_t{1}))}).output(0);
  root.UpdateInput(merge.node, 1, next);
  REQUIRE(root.ok());
  auto g = Graph::Build(root.ToGraphDef(), Ops());
  REQUIRE(g.ok());
  Runner r;
  auto exec = Executor::Create(std::make_shared<const Graph>(std::move(g).value()),
                               {&Ops(), &r.env, &r.pool, kDeviceCpu, "cpu"});
  CHECK(exec.status().code() == Code::kInvalidArgument);
  CHECK(exec.status().node() == "less");
  CHECK(exec.status().message().find("two frames") != std::string::npos);
}

// A loop may span tasks (partition_loops_test.cc) only through its
// LoopCond, whose value drives the other tasks' iterations.
TEST_CASE("partitioning refuses a loop on two tasks without a LoopCond, naming a node of it") {
  // A hand-made loop whose Switch takes its predicate straight from a Less:
  // nothing marks it as the loop's, to tell the other task when an
  // iteration starts or the loop ends.
  const Scope root = Scope::NewRootScope(Ops());
  const Scope worker = root.WithDevice("/job:worker/task:0");
  Output x = ops::Const(worker, Input(int64_t{0}));
  Output enter = worker.AddOperation("Enter", {x}, {{"frame_name", std::string("f")}}).output(0);
  Output merge = worker.AddOperation("Merge", {enter, enter}).output(0);
  Operation sw = worker.AddOperation("Switch", {merge, ops::Less(worker, merge, merge)});
  worker.AddOperation("Exit", {sw.output(0)});
  Output add = ops::Add(root.WithOpName("on_ps").WithDevice("/job:ps/task:0"), sw.output(1),
                        sw.output(1));
  Output next = worker.AddOperation("NextIteration", {add}).output(0);
  root.UpdateInput(merge.node, 1, next);
  REQUIRE(root.ok());
  auto g = Graph::Build(root.ToGraphDef(), Ops());
  REQUIRE(g.ok());
  std::vector<std::string> devices;
  for (const Graph::Node& node : g->nodes()) devices.push_back(node.def.device);
  auto parts = PartitionGraph(*g, devices);
  INFO(parts.status().ToString());
  CHECK(parts.status().code() == Code::kInvalidArgument);
  CHECK(!parts.status().node().empty());
  CHECK(parts.status().message().find("on /job:") != std::string::npos);
  CHECK(parts.status().message().find("no LoopCond") != std::string::npos);
}

}  // namespace
}  // namespace tfd
