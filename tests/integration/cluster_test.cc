// A cluster of real tfd processes: graphs that span tasks, variables shared
// by name, barriers, and the failures the design promises to handle.
#include <catch2/catch.hpp>
#include <signal.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>

#include "tests/integration/cluster_fixture.h"
#include "tests/integration/graph_helpers.h"
#include "tests/integration/raw_socket.h"
#include "tests/kernels/data/data_test_util.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;
using testing::DataTempDir;
using testing::LocalCluster;
using testing::WriteCountingExamples;

NodeDef Node(std::string name, std::string op, std::vector<std::string> inputs, std::string device,
             AttrMap attrs = {}) {
  return NodeDef{std::move(name), std::move(op), std::move(inputs), std::move(device), std::move(attrs)};
}

NodeDef Const(std::string name, float v, std::string device = "") {
  return Node(std::move(name), "Const", {}, std::move(device),
              {{"value", Tensor::Scalar(v)}, {"dtype", DType::kFloat32}});
}

NodeDef Var(std::string name, std::string device = "") {
  return Node(std::move(name), "VariableV2", {}, std::move(device),
              {{"dtype", DType::kFloat32}, {"shape", PartialShape(std::vector<int64_t>{})}});
}

float Scalar(const Tensor& t) { return t.scalar<float>(); }

TEST_CASE("walkthrough 2: pinning across 2 ps and 3 workers gives 4.0, traced where pinned") {
  LocalCluster cluster({{"ps", 2}, {"worker", 3}});
  REQUIRE(cluster.StartAll().ok());
  GraphDef g;
  g.nodes = {Var("a", "/job:ps"), Const("one", 1.0f, "/job:ps"),
             Node("init", "Assign", {"a", "one"}, ""),
             Const("two", 2.0f, "/job:worker"),
             Node("b", "Add", {"a", "two"}, "/job:worker"),
             Node("c", "Add", {"a", "b"}, "/job:worker/task:1")};
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  Status s = (*client)->CreateSession(g);
  INFO(s.ToString());
  REQUIRE(s.ok());
  auto init = (*client)->Run({}, {}, {"init"}, {});
  INFO(init.status().ToString());
  REQUIRE(init.ok());
  auto out = (*client)->Run({}, {"c"}, {}, {.trace = true});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK(Scalar(out->fetches[0]) == 4.0f);
  std::map<std::string, std::string> where;
  for (const auto& n : out->stats.nodes) where[n.node] = n.device;
  CHECK(where["a"] == "/job:ps/replica:0/task:0/device:CPU:0");
  CHECK(where["b"] == "/job:worker/replica:0/task:0/device:CPU:0");
  CHECK(where["c"] == "/job:worker/replica:0/task:1/device:CPU:0");
}

TEST_CASE("walkthrough 4: a variable shared by name is seen through sessions on two tasks") {
  LocalCluster cluster({{"worker", 2}});
  REQUIRE(cluster.StartAll().ok());
  auto w0 = cluster.Connect("worker", 0);
  auto w1 = cluster.Connect("worker", 1);
  REQUIRE((w0.ok() && w1.ok()));
  // Each process builds its own graph; both pin the variable to worker 0 (a
  // variable with no device would be each session's own, on its own task).
  GraphDef g0;
  g0.nodes = {Var("shared", "/job:worker/task:0"), Const("v", 7.0f),
              Node("set", "Assign", {"shared", "v"}, "")};
  GraphDef g1;
  g1.nodes = {Var("shared", "/job:worker/task:0"), Node("read", "Identity", {"shared"}, "")};
  REQUIRE((*w0)->CreateSession(g0).ok());
  REQUIRE((*w1)->CreateSession(g1).ok());
  REQUIRE((*w0)->Run({}, {}, {"set"}, {}).ok());
  auto out = (*w1)->Run({}, {"read"}, {}, {.trace = true});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK(Scalar(out->fetches[0]) == 7.0f);
  auto vars = (*w0)->ListVariables(5s);
  REQUIRE(vars.ok());
  REQUIRE(vars->size() == 1);
  CHECK((*vars)[0].name == "shared");
  CHECK((*vars)[0].initialized);
}

TEST_CASE("a graph that names no devices runs worker 1's step while worker 0 is down") {
  // Between-graph replication with devices forgotten, as TF1 places it: the
  // unpinned nodes run on the session's own task, the update with the ps
  // variable it takes, and worker 0 (never started here) is not involved.
  LocalCluster cluster({{"ps", 1}, {"worker", 2}});
  REQUIRE(cluster.Start("ps", 0).ok());
  REQUIRE(cluster.Start("worker", 1).ok());
  auto client = cluster.Connect("worker", 1);
  REQUIRE(client.ok());
  GraphDef g;
  g.nodes = {Var("w", "/job:ps"), Const("zero", 0.0f), Node("init", "Assign", {"w", "zero"}, ""),
             Const("x", 3.0f), Node("y", "Mul", {"x", "x"}, ""),
             Node("update", "AssignAdd", {"w", "y"}, ""),
             Node("step", "Identity", {"update"}, "")};
  REQUIRE((*client)->CreateSession(g, 10s).ok());
  auto init = (*client)->Run({}, {}, {"init"}, {});
  INFO(init.status().ToString());
  REQUIRE(init.ok());
  auto out = (*client)->Run({}, {"step"}, {}, {.trace = true});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK(Scalar(out->fetches[0]) == 9.0f);
  std::map<std::string, std::string> where;
  for (const auto& n : out->stats.nodes) where[n.node] = n.device;
  CHECK(where["y"] == "/job:worker/replica:0/task:1/device:CPU:0");
  CHECK(where["step"] == "/job:worker/replica:0/task:1/device:CPU:0");
  CHECK(where["update"] == "/job:ps/replica:0/task:0/device:CPU:0");
}

TEST_CASE("an uninitialized variable and a bad device fail with codes naming them") {
  LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.StartAll().ok());
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  GraphDef g;
  g.nodes = {Var("w", "/job:ps"), Node("read", "Identity", {"w"}, "/job:worker")};
  REQUIRE((*client)->CreateSession(g).ok());
  auto out = (*client)->Run({}, {"read"}, {}, {});
  CHECK(out.status().code() == Code::kFailedPrecondition);
  CHECK(out.status().message().find("'w'") != std::string::npos);
  CHECK(out.status().message().find("/job:") != std::string::npos);

  GraphDef bad;
  bad.nodes = {Const("x", 1.0f, "/job:chief")};
  REQUIRE((*client)->CreateSession(bad).ok());
  auto placed = (*client)->Run({}, {"x"}, {}, {});
  CHECK(placed.status().code() == Code::kInvalidArgument);
  CHECK(placed.status().message().find("chief") != std::string::npos);
}

// A rolling upgrade, seen from a daemon older than the client's tfd.
TEST_CASE("a session takes a newer tfd's graph that sets nothing unknown, and names versions if not") {
  LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.StartAll().ok());
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  const GraphVersions newer{.producer = kGraphVersion + 1, .min_consumer = 0};
  GraphDef g;
  g.nodes = {Const("p", 1.0f, "/job:ps"), Node("q", "Add", {"p", "p"}, "/job:worker")};
  g.versions = newer;
  // The ps registers its partition, which carries the graph's versions.
  Status s = (*client)->CreateSession(g);
  INFO(s.ToString());
  REQUIRE(s.ok());
  auto out = (*client)->Run({}, {"q"}, {}, {});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK(Scalar(out->fetches[0]) == 2.0f);
  // An attr this tfd's Const lacks: refused as a version problem.
  g.nodes[0].attrs["fancy"] = true;
  s = (*client)->CreateSession(g);
  CHECK(s.code() == Code::kFailedPrecondition);
  CHECK(s.message().find("op Const has no attr 'fancy'") != std::string::npos);
  CHECK(s.message().find("graph version " + std::to_string(kGraphVersion + 1)) != std::string::npos);
  CHECK(s.message().find("this tfd is graph version " + std::to_string(kGraphVersion)) !=
        std::string::npos);
  // A graph that needs a newer tfd outright.
  g.nodes[0].attrs.erase("fancy");
  g.versions.min_consumer = kGraphVersion + 1;
  s = (*client)->CreateSession(g);
  CHECK(s.code() == Code::kFailedPrecondition);
  CHECK(s.message().find("needs tfd graph version " + std::to_string(kGraphVersion + 1)) !=
        std::string::npos);
}

TEST_CASE("a task that is down fails the step with UNAVAILABLE naming it, by the deadline") {
  LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.Start("worker", 0).ok());  // ps never starts
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  GraphDef g;
  g.nodes = {Const("p", 1.0f, "/job:ps"), Node("q", "Identity", {"p"}, "/job:worker")};
  REQUIRE((*client)->CreateSession(g, 2s).ok());
  const auto start = std::chrono::steady_clock::now();
  auto out = (*client)->Run({}, {"q"}, {}, {});
  CHECK(out.status().code() == Code::kUnavailable);
  CHECK(out.status().message().find("/job:ps/replica:0/task:0") != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - start < 20s);  // bounded, not a hang
}

TEST_CASE("a run started before a task is up completes once it joins (walkthrough 7)") {
  LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.Start("worker", 0).ok());
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  GraphDef g;
  g.nodes = {Const("p", 3.0f, "/job:ps"), Node("q", "Identity", {"p"}, "/job:worker")};
  REQUIRE((*client)->CreateSession(g, 20s).ok());
  // The ps starts, from another thread, once the run is waiting for it: a
  // stand-in on its port sees the run's first try to reach it.
  testing::StandIn stand_in(cluster.Address("ps", 0));
  REQUIRE(stand_in.listening());
  std::atomic<bool> waiting{false};
  std::thread starter([&cluster, &stand_in, &waiting] {
    waiting = stand_in.WaitConnection(20s);
    stand_in.Close();
    (void)cluster.Spawn("ps", 0);
  });
  auto out = (*client)->Run({}, {"q"}, {}, {});
  starter.join();
  CHECK(waiting);
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK(Scalar(out->fetches[0]) == 3.0f);
}

TEST_CASE("a task that dies gives UNAVAILABLE; after it restarts the same run succeeds") {
  LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.StartAll().ok());
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  GraphDef g;
  g.nodes = {Const("p", 5.0f, "/job:ps"), Node("q", "Identity", {"p"}, "/job:worker")};
  REQUIRE((*client)->CreateSession(g, 3s).ok());
  REQUIRE((*client)->Run({}, {"q"}, {}, {}).ok());
  cluster.Kill("ps", 0);
  auto failed = (*client)->Run({}, {"q"}, {}, {});
  CHECK(failed.status().code() == Code::kUnavailable);
  CHECK(failed.status().message().find("/job:ps/replica:0/task:0") != std::string::npos);
  REQUIRE(cluster.Start("ps", 0).ok());
  auto again = (*client)->Run({}, {"q"}, {}, {});
  INFO(again.status().ToString());
  REQUIRE(again.ok());
  CHECK(Scalar(again->fetches[0]) == 5.0f);
  // The run says the ps restarted (its state may have gone back), once.
  CHECK(again->restarted == std::vector<std::string>{"/job:ps/replica:0/task:0"});
  auto later = (*client)->Run({}, {"q"}, {}, {});
  REQUIRE(later.ok());
  CHECK(later->restarted.empty());
}

// What a trainer tells a restarted ps by: the cluster barrier answers with
// each task's incarnation, new when the task restarted, the same otherwise.
TEST_CASE("the cluster barrier names each task's incarnation; a restart changes only its own") {
  LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.StartAll().ok());
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  auto before = (*client)->WaitCluster(10s);
  REQUIRE(before.ok());
  REQUIRE(before->size() == 2);
  CHECK((*before)[0].task == "/job:ps/replica:0/task:0");
  CHECK((*before)[1].task == "/job:worker/replica:0/task:0");
  CHECK((*before)[0].incarnation != 0);
  CHECK((*before)[0].incarnation != (*before)[1].incarnation);
  // Asked twice, nothing restarted: the same answer.
  auto same = (*client)->WaitCluster(10s);
  REQUIRE(same.ok());
  CHECK((*same)[0].incarnation == (*before)[0].incarnation);
  // Two restarts of the ps in a row: a new incarnation each time.
  uint64_t last = (*before)[0].incarnation;
  for (int restart = 0; restart < 2; ++restart) {
    cluster.Kill("ps", 0);
    REQUIRE(cluster.Start("ps", 0).ok());
    auto after = (*client)->WaitCluster(10s);
    INFO(after.status().ToString());
    REQUIRE(after.ok());
    CHECK((*after)[0].incarnation != last);
    CHECK((*after)[1].incarnation == (*before)[1].incarnation);
    last = (*after)[0].incarnation;
  }
}

// A graph over ps and worker: y = v * x, with v on the ps.
GraphDef ScaleGraph() {
  GraphDef g;
  g.nodes = {Var("v", "/job:ps"), Const("three", 3.0f, "/job:ps"),
             Node("init", "Assign", {"v", "three"}, "/job:ps"),
             Node("x", "Placeholder", {}, "/job:worker", {{"dtype", DType::kFloat32}}),
             Node("y", "Mul", {"v", "x"}, "/job:worker")};
  return g;
}

TEST_CASE("a callable runs its signature across tasks with only the feeds, registered once") {
  LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.StartAll().ok());
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  Client& c = **client;
  REQUIRE(c.CreateSession(ScaleGraph()).ok());
  REQUIRE(c.Run({}, {}, {"init"}, {}).ok());
  auto callable = c.MakeCallable({"x"}, {"y", "x:0"}, {});
  INFO(callable.status().ToString());
  REQUIRE(callable.ok());
  auto first = c.RunCallable(*callable, {Tensor::Scalar(2.0f)}, {});
  INFO(first.status().ToString());
  REQUIRE(first.ok());
  REQUIRE(first->fetches.size() == 2);
  CHECK(Scalar(first->fetches[0]) == 6.0f);
  CHECK(Scalar(first->fetches[1]) == 2.0f);
  auto ps = cluster.Connect("ps", 0);
  REQUIRE(ps.ok());
  auto registered = (*ps)->GetStatus(5s);
  REQUIRE(registered.ok());
  for (float x : {5.0f, -1.0f, 0.5f}) {
    auto out = c.RunCallable(*callable, {Tensor::Scalar(x)}, {.trace = x < 0});
    REQUIRE(out.ok());
    CHECK(Scalar(out->fetches[0]) == 3.0f * x);
    if (x < 0) {
      std::set<std::string> traced;
      for (const auto& n : out->stats.nodes) traced.insert(n.node);
      CHECK(traced.count("v"));  // the ps's part is traced too
      CHECK(traced.count("y"));
    }
  }
  // Later runs registered nothing more on the ps.
  auto after = (*ps)->GetStatus(5s);
  REQUIRE(after.ok());
  CHECK(after->registered_graphs == registered->registered_graphs);
  // The same as Session.run gives.
  auto plain = c.Run({{"x", Tensor::Scalar(5.0f)}}, {"y"}, {}, {});
  REQUIRE(plain.ok());
  CHECK(Scalar(plain->fetches[0]) == 15.0f);
}

TEST_CASE("a callable refuses bad signatures and bad feeds, and works after each refusal") {
  LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.StartAll().ok());
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  Client& c = **client;
  REQUIRE(c.CreateSession(ScaleGraph()).ok());
  REQUIRE(c.Run({}, {}, {"init"}, {}).ok());
  auto missing = c.MakeCallable({"x"}, {"nope"}, {});
  CHECK(missing.status().code() == Code::kNotFound);
  CHECK(missing.status().message().find("nope") != std::string::npos);
  CHECK(c.MakeCallable({"x", "x:0"}, {"y"}, {}).status().code() == Code::kInvalidArgument);
  CHECK(c.MakeCallable({}, {"y"}, {"no_target"}).status().code() == Code::kNotFound);
  CHECK(c.MakeCallable({"x:zz"}, {"y"}, {}).status().code() == Code::kInvalidArgument);
  auto callable = c.MakeCallable({"x"}, {"y"}, {});
  REQUIRE(callable.ok());
  // Two refused runs in a row: too many feeds, then the wrong dtype.
  auto count = c.RunCallable(*callable, {Tensor::Scalar(1.0f), Tensor::Scalar(2.0f)}, {});
  CHECK(count.status().code() == Code::kInvalidArgument);
  auto dtype = c.RunCallable(*callable, {Tensor::Scalar(int64_t{1})}, {});
  CHECK(dtype.status().code() == Code::kInvalidArgument);
  CHECK(dtype.status().message().find("'x:0'") != std::string::npos);
  auto ok = c.RunCallable(*callable, {Tensor::Scalar(4.0f)}, {});
  INFO(ok.status().ToString());
  REQUIRE(ok.ok());
  CHECK(Scalar(ok->fetches[0]) == 12.0f);
  REQUIRE(c.ReleaseCallable(*callable).ok());
  CHECK(c.RunCallable(*callable, {Tensor::Scalar(4.0f)}, {}).status().code() ==
        Code::kInvalidArgument);
  CHECK(c.ReleaseCallable(*callable).code() == Code::kInvalidArgument);
}

TEST_CASE("a callable survives two restarts of a task, and ends with its session") {
  LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.StartAll().ok());
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  Client& c = **client;
  GraphDef g;
  g.nodes = {Const("p", 5.0f, "/job:ps"),
             Node("x", "Placeholder", {}, "/job:worker", {{"dtype", DType::kFloat32}}),
             Node("q", "Add", {"p", "x"}, "/job:worker")};
  REQUIRE(c.CreateSession(g, 3s).ok());
  auto callable = c.MakeCallable({"x"}, {"q"}, {});
  REQUIRE(callable.ok());
  REQUIRE(c.RunCallable(*callable, {Tensor::Scalar(1.0f)}, {}).ok());
  for (int restart = 0; restart < 2; ++restart) {
    cluster.Kill("ps", 0);
    auto failed = c.RunCallable(*callable, {Tensor::Scalar(1.0f)}, {});
    CHECK(failed.status().code() == Code::kUnavailable);
    CHECK(failed.status().message().find("/job:ps/replica:0/task:0") != std::string::npos);
    REQUIRE(cluster.Start("ps", 0).ok());
    auto again = c.RunCallable(*callable, {Tensor::Scalar(2.0f)}, {});
    INFO(again.status().ToString());
    REQUIRE(again.ok());
    CHECK(Scalar(again->fetches[0]) == 7.0f);
    CHECK(again->restarted == std::vector<std::string>{"/job:ps/replica:0/task:0"});
  }
  REQUIRE(c.CloseSession().ok());
  auto closed = c.RunCallable(*callable, {Tensor::Scalar(1.0f)}, {});
  CHECK(closed.status().code() == Code::kFailedPrecondition);
  CHECK(closed.status().message().find("closed") != std::string::npos);
}

TEST_CASE("sixteen clients at once and 300 sessions in a row: no error, nothing left held") {
  // The short version of bench/load_bench (issue 14's load run).
  LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.StartAll().ok());
  {
    auto setup = cluster.Connect("worker", 0);
    REQUIRE(setup.ok());
    REQUIRE((*setup)->CreateSession(ScaleGraph()).ok());
    REQUIRE((*setup)->Run({}, {}, {"init"}, {}).ok());
  }
  constexpr int kClients = 16;
  std::atomic<int> errors{0}, wrong{0}, steps{0};
  std::mutex first_mu;
  std::string first_error;
  const std::string address = cluster.Address("worker", 0);
  const auto until = std::chrono::steady_clock::now() + 3s;
  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([&, i] {
      auto fail = [&](const Status& s) {
        ++errors;
        std::lock_guard<std::mutex> lock(first_mu);
        if (first_error.empty()) first_error = s.ToString();
      };
      // Each thread its own event loop: the fixture's belongs to this one.
      auto io = kj::setupAsyncIo();
      auto client = Client::Connect(io, address, "", 10s);
      if (!client.ok()) return fail(client.status());
      if (Status s = (*client)->CreateSession(ScaleGraph()); !s.ok()) return fail(s);
      const float x = static_cast<float>(i + 1);
      while (std::chrono::steady_clock::now() < until) {
        auto out = (*client)->Run({{"x", Tensor::Scalar(x)}}, {"y"}, {}, {});
        if (!out.ok()) return fail(out.status());
        ++steps;
        if (Scalar(out->fetches[0]) != 3.0f * x) ++wrong;
      }
      if (Status s = (*client)->CloseSession(); !s.ok()) fail(s);
    });
  }
  for (auto& t : threads) t.join();
  INFO(first_error);
  CHECK(errors == 0);
  CHECK(wrong == 0);
  CHECK(steps > kClients);
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  for (int i = 0; i < 300; ++i) {
    Status s = (*client)->CreateSession(ScaleGraph());
    if (s.ok()) s = (*client)->Run({{"x", Tensor::Scalar(1.0f)}}, {"y"}, {}, {}).status();
    if (s.ok()) s = (*client)->CloseSession();
    INFO("session " << i);
    REQUIRE(s.ok());
  }
  // Every session and partition went with its close.
  auto worker = (*client)->GetStatus(5s);
  REQUIRE(worker.ok());
  CHECK(worker->sessions == 0);
  CHECK(worker->registered_graphs == 0);
  auto ps = cluster.Connect("ps", 0);
  REQUIRE(ps.ok());
  auto ps_status = (*ps)->GetStatus(5s);
  REQUIRE(ps_status.ok());
  CHECK(ps_status->registered_graphs == 0);
}

TEST_CASE("the init barrier waits for the initializer and the cluster barrier for every task") {
  LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.StartAll().ok());
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  CHECK((*client)->WaitCluster(5s).status().ok());
  GraphDef g;
  g.nodes = {Var("w", "/job:ps"), Const("v", 1.0f, "/job:ps"), Node("init", "Assign", {"w", "v"}, "")};
  REQUIRE((*client)->CreateSession(g).ok());
  REQUIRE((*client)->Run({}, {}, {"w"}, {}).ok());  // creates w, uninitialized
  Status early = (*client)->WaitInitialized({"w"}, 300ms);
  CHECK(early.code() == Code::kDeadlineExceeded);
  CHECK(early.message().find("w (uninitialized)") != std::string::npos);
  REQUIRE((*client)->Run({}, {}, {"init"}, {}).ok());
  CHECK((*client)->WaitInitialized({"w"}, 5s).ok());
  CHECK((*client)->WaitInitialized({}, 5s).ok());
}

// TF1's report_uninitialized_variables across the cluster, which the chief
// decides its initialization on: a variable not made yet or not assigned is
// reported, an initialized one is not, and a task that does not answer (a
// stopped ps) fails the report, naming the task, instead of having its
// variables taken for uninitialized (the chief would assign them their
// initial values over what they had learned).
TEST_CASE("the uninitialized report names what is not initialized, and fails on a silent task") {
  LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.StartAll().ok());
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  GraphDef g;
  g.nodes = {Var("w", "/job:ps"), Const("v", 1.0f, "/job:ps"), Node("init", "Assign", {"w", "v"}, "")};
  REQUIRE((*client)->CreateSession(g).ok());
  auto before = (*client)->ReportUninitialized({"w", "never"}, 5s);
  REQUIRE(before.ok());
  CHECK(*before == std::vector<std::string>{"w", "never"});  // neither made yet
  REQUIRE((*client)->Run({}, {}, {"w"}, {}).ok());            // made, uninitialized
  CHECK((*client)->ReportUninitialized({"w"}, 5s).value() == std::vector<std::string>{"w"});
  CHECK((*client)->ReportUninitialized({}, 5s).value() == std::vector<std::string>{"w"});
  REQUIRE((*client)->Run({}, {}, {"init"}, {}).ok());
  CHECK((*client)->ReportUninitialized({"w", "never"}, 5s).value() ==
        std::vector<std::string>{"never"});
  CHECK((*client)->ReportUninitialized({}, 5s).value().empty());

  const pid_t ps = cluster.Pid("ps", 0);
  REQUIRE(ps > 0);
  REQUIRE(::kill(ps, SIGSTOP) == 0);
  auto silent = (*client)->ReportUninitialized({"w"}, 500ms);
  REQUIRE(::kill(ps, SIGCONT) == 0);
  INFO(silent.status().ToString());
  CHECK(silent.status().code() == Code::kUnavailable);
  CHECK(silent.status().task() == "/job:ps/replica:0/task:0");
  auto back = (*client)->ReportUninitialized({"w"}, 5s);
  INFO(back.status().ToString());
  REQUIRE(back.ok());
  CHECK(back->empty());
}

// Waiters that start before the variable exists (the workers of a job whose
// chief has not run yet) are answered once the chief initializes it, on a
// worker that holds no variable as on the ps; a name that never appears
// ends the wait at its deadline, named. The barrier asks the tasks that
// hold what it waits for, and looks for the rest in rounds that back off.
TEST_CASE("init barriers that wait before the variable exists pass once it is initialized") {
  LocalCluster cluster({{"ps", 1}, {"worker", 2}});
  REQUIRE(cluster.StartAll().ok());
  std::atomic<int> connected{0};
  std::vector<Status> waited(2, errors::Internal("never waited"));
  std::vector<std::thread> waiters;
  const std::vector<std::string> masters = {cluster.Address("worker", 1), cluster.Address("ps", 0)};
  for (size_t i = 0; i < masters.size(); ++i) {
    waiters.emplace_back([&, i] {
      auto io = kj::setupAsyncIo();  // each thread its own event loop
      auto client = Client::Connect(io, masters[i], "", 10s);
      ++connected;
      if (!client.ok()) {
        waited[i] = client.status();
        return;
      }
      waited[i] = (*client)->WaitInitialized({"w"}, 8s);
    });
  }
  while (connected.load() < 2) std::this_thread::yield();
  auto chief = cluster.Connect("worker", 0);
  REQUIRE(chief.ok());
  GraphDef g;
  g.nodes = {Var("w", "/job:ps"), Const("v", 1.0f, "/job:ps"), Node("init", "Assign", {"w", "v"}, "")};
  REQUIRE((*chief)->CreateSession(g).ok());
  REQUIRE((*chief)->Run({}, {}, {"init"}, {}).ok());
  for (auto& t : waiters) t.join();
  CHECK(waited[0].ok());
  CHECK(waited[1].ok());
  Status missing = (*chief)->WaitInitialized({"w", "never"}, 1s);
  CHECK(missing.code() == Code::kDeadlineExceeded);
  CHECK(missing.message().find("never (not found)") != std::string::npos);
  CHECK(missing.message().find("w (") == std::string::npos);
}

TEST_CASE("a step that times out on an empty queue on another task names the queue") {
  LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.StartAll().ok());
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  GraphDef g;
  g.nodes = {testing::ScalarQueue("queue", "/job:ps", 2, "jobs"),
             testing::ScalarDequeue("take", "queue"),
             Node("taken", "Identity", {"take"}, "/job:worker")};
  REQUIRE((*client)->CreateSession(g, 1s).ok());
  // Both tasks reach the deadline at about the same time, and either answer
  // may reach the master first: each run must name the queue, never just the
  // transfer that was waiting for it.
  for (int i = 0; i < 4; ++i) {
    auto out = (*client)->Run({}, {"taken"}, {}, {});
    INFO(out.status().ToString());
    CHECK(out.status().code() == Code::kDeadlineExceeded);
    CHECK(out.status().message().find("queue 'jobs'") != std::string::npos);
  }
}

// Synchronous replicas: a gradient accumulator on the ps counts one gradient
// per replica (the task whose session runs the step) and update. A
// replica's task killed after it pushed, restarted, pushing the same round
// again — twice — must not be counted twice, which would complete the
// update without the other replica.
TEST_CASE("a replica restarted twice within an update counts once in the accumulator") {
  LocalCluster cluster({{"ps", 1}, {"worker", 2}});
  REQUIRE(cluster.StartAll().ok());
  const AttrMap acc_attrs{{"dtype", DType::kFloat32},
                          {"shape", PartialShape(std::vector<int64_t>{})},
                          {"shared_name", std::string("grads")}};
  GraphDef g;  // every replica's graph, as in between-graph replication
  g.nodes = {Node("acc", "ConditionalAccumulator", {}, "/job:ps", acc_attrs),
             Node("grad", "Placeholder", {}, "/job:worker", {{"dtype", DType::kFloat32}}),
             Node("step", "Placeholder", {}, "/job:worker", {{"dtype", DType::kInt64}}),
             Node("push", "AccumulatorApplyGradient", {"acc", "step", "grad"}, "",
                  {{"dtype", DType::kFloat32}}),
             // After the push, so that a push's run reports what it left.
             Node("count", "AccumulatorNumAccumulated", {"acc", "^push"}, ""),
             Node("two", "Const", {}, "/job:worker",
                  {{"value", Tensor::Scalar<int32_t>(2)}, {"dtype", DType::kInt32}}),
             Node("average", "AccumulatorTakeGradient", {"acc", "two"}, "",
                  {{"dtype", DType::kFloat32}})};
  auto push = [&](Client& replica, float grad, int64_t step) {
    auto out = replica.Run({{"grad", Tensor::Scalar(grad)}, {"step", Tensor::Scalar(step)}},
                           {"count"}, {}, {});
    INFO(out.status().ToString());
    REQUIRE(out.ok());
    return out->fetches[0].scalar<int32_t>();
  };
  auto session_on = [&](int worker) {
    auto c = cluster.Connect("worker", worker);
    REQUIRE(c.ok());
    REQUIRE((*c)->CreateSession(g, 10s).ok());
    return std::move(c).value();
  };

  auto w0 = session_on(0);
  CHECK(push(*w0, 2.0f, 0) == 1);
  for (float again : {100.0f, 1000.0f}) {
    w0.reset();
    cluster.Kill("worker", 0);
    REQUIRE(cluster.Start("worker", 0).ok());
    w0 = session_on(0);
    CHECK(push(*w0, again, 0) == 1);  // dropped: worker:0 has a gradient in
  }
  auto w1 = session_on(1);
  CHECK(push(*w1, 4.0f, 0) == 2);
  auto avg = w1->Run({}, {"average"}, {}, {});
  INFO(avg.status().ToString());
  REQUIRE(avg.ok());
  CHECK(Scalar(avg->fetches[0]) == 3.0f);  // (2 + 4) / 2
  // The next update takes each replica's gradient again.
  CHECK(push(*w0, 10.0f, 1) == 1);
  CHECK(push(*w1, 20.0f, 1) == 2);
  auto next = w0->Run({}, {"average"}, {}, {});
  REQUIRE(next.ok());
  CHECK(Scalar(next->fetches[0]) == 15.0f);
}

// A dataset's cursor on a task is read by one master session at a time: a
// second trainer on the task is refused (it used to take every other batch
// silently), and the next session reads on from where the last left it —
// after a close, after its master task was killed, after its client dropped.
TEST_CASE("a dataset is read by one session at a time and passed on when that one ends") {
  DataTempDir data;
  WriteCountingExamples(data.path(), 10);  // example i has label i
  LocalCluster cluster({{"worker", 2}}, {"--data-dir=" + data.path().string()});
  REQUIRE(cluster.StartAll().ok());
  const std::string task0 = "/job:worker/replica:0/task:0";
  GraphDef g;
  g.nodes = {Node("input", "IdxDataset", {}, task0,
                  {{"images_path", std::string("images")},
                   {"labels_path", std::string("labels")},
                   {"shuffle", false}}),
             Node("batch", "IdxNextBatch", {"input"}, task0, {{"batch_size", int64_t{2}}})};
  auto session_on = [&](int worker) {
    auto c = cluster.Connect("worker", worker);
    REQUIRE(c.ok());
    REQUIRE((*c)->CreateSession(g, 10s).ok());
    return std::move(c).value();
  };
  auto read = [&](Client& c) -> StatusOr<std::vector<int>> {
    TFD_ASSIGN_OR_RETURN(auto out, c.Run({}, {"batch:1"}, {}, {}));
    const Tensor& labels = out.fetches[0];
    return std::vector<int>(labels.data<int32_t>(), labels.data<int32_t>() + labels.dim(0));
  };
  // A session whose predecessor went away without closing is refused until
  // the task notices (its connection's end releases the session): bounded.
  auto read_once_free = [&](Client& c) {
    const auto deadline = std::chrono::steady_clock::now() + 15s;
    for (;;) {
      auto got = read(c);
      if (got.ok() || got.status().code() != Code::kFailedPrecondition ||
          std::chrono::steady_clock::now() > deadline) {
        return got;
      }
      std::this_thread::sleep_for(20ms);
    }
  };

  auto a = session_on(0);  // the dataset is in its master's own partition
  CHECK(read(*a).value() == std::vector<int>{0, 1});
  auto b = session_on(1);  // registered with task 0 from worker:1's master
  for (int i = 0; i < 2; ++i) {
    auto refused = read(*b);
    CHECK(refused.status().code() == Code::kFailedPrecondition);
    INFO(refused.status().ToString());
    CHECK(refused.status().message().find("IDX dataset 'input' is being read by session ") !=
          std::string::npos);
    CHECK(refused.status().message().find(" of /job:worker/replica:0/task:1 (incarnation") !=
          std::string::npos);
  }
  CHECK(read(*a).value() == std::vector<int>{2, 3});  // the refusals moved nothing

  REQUIRE(a->CloseSession().ok());
  CHECK(read(*b).value() == std::vector<int>{4, 5});
  auto c = session_on(0);
  CHECK(read(*c).status().code() == Code::kFailedPrecondition);
  // b's master task killed: its partitions on task 0 go with the connection.
  cluster.Kill("worker", 1);
  CHECK(read_once_free(*c).value() == std::vector<int>{6, 7});
  // c's client gone without closing: its connection's end frees the cursor.
  c.reset();
  auto d = session_on(0);
  CHECK(read_once_free(*d).value() == std::vector<int>{8, 9});
}

TEST_CASE("SIGTERM stops a task cleanly with exit status 0") {
  LocalCluster cluster({{"worker", 1}});
  REQUIRE(cluster.StartAll().ok());
  auto code = cluster.Stop("worker", 0, 10s);
  REQUIRE(code.ok());
  CHECK(*code == 0);
  CHECK(cluster.Log("worker", 0).find("[/job:worker/replica:0/task:0]") != std::string::npos);
}

}  // namespace
}  // namespace tfd
