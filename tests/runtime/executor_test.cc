// The executor and in-process session: ordering, parallel branches, errors,
// deadlines, feeds and fetches — with tiny test ops, apart from the op library.
#include "daemon/runtime/executor.h"

#include <catch2/catch.hpp>
#include <boost/asio/post.hpp>
#include <future>
#include <optional>
#include <thread>

#include "common/allowed_cpus.h"
#include "common/graph_io.h"
#include "common/subprocess.h"
#include "daemon/runtime/local_session.h"
#include "tests/util/test_ops.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;

struct Fixture {
  Fixture() {
    REQUIRE(testing::RegisterTestOps(registry).ok());
    env.resources = &resources;
  }
  GraphDef Parse(const std::string& text) {
    auto g = ParseGraph(text, "test.txt");
    INFO(g.status().ToString() << "\n" << text);
    REQUIRE(g.ok());
    return *g;
  }
  OpRegistry registry;
  ResourceMgr resources;
  KernelEnv env;
  boost::asio::thread_pool pool{2};
};

const char* kConstA = R"g((name = "a", op = "TConst", attrs = [
   (name = "value", value = (tensor = (dtype = float32, shape = [2], floatVal = [1, 2]))),
   (name = "dtype", value = (type = float32))]))g";

TEST_CASE("a diamond computes each node once and fetches by name") {
  Fixture f;
  LocalSession s(f.registry, f.env, f.pool);
  REQUIRE(s.Create(f.Parse(std::string("(nodes = [") + kConstA + R"g(,
      (name = "b", op = "TAdd", inputs = ["a", "a"]),
      (name = "c", op = "TAdd", inputs = ["a", "b"]),
      (name = "d", op = "TAdd", inputs = ["b", "c"])]))g")).ok());
  auto out = s.Run({}, {"d", "b:0"}, {});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  REQUIRE(out->fetches.size() == 2);
  CHECK(TensorsEqual(out->fetches[0], Tensor::FromVector<float>({5, 10})));
  CHECK(TensorsEqual(out->fetches[1], Tensor::FromVector<float>({2, 4})));
}

TEST_CASE("control dependencies order side effects") {
  Fixture f;
  LocalSession s(f.registry, f.env, f.pool);
  REQUIRE(s.Create(f.Parse(R"g((nodes = [
      (name = "first", op = "TRecord"),
      (name = "second", op = "TRecord", inputs = ["^first"]),
      (name = "third", op = "TRecord", inputs = ["^second"]),
      (name = "unrelated", op = "TRecord")]))g")).ok());
  for (int i = 0; i < 20; ++i) REQUIRE(s.Run({}, {}, {"third"}).ok());
  auto order = testing::RecordedOrder(f.resources);
  REQUIRE(order.size() == 60);  // "unrelated" was pruned away every time
  for (size_t i = 0; i < order.size(); i += 3) {
    CHECK(order[i] == "first");
    CHECK(order[i + 1] == "second");
    CHECK(order[i + 2] == "third");
  }
}

TEST_CASE("feeds replace tensors; fetching a fed tensor returns the feed") {
  Fixture f;
  LocalSession s(f.registry, f.env, f.pool);
  REQUIRE(s.Create(f.Parse(std::string("(nodes = [") + kConstA + R"g(,
      (name = "b", op = "TAdd", inputs = ["a", "a"])]))g")).ok());
  auto out = s.Run({{"a", Tensor::FromVector<float>({10, 20})}}, {"b", "a"}, {});
  REQUIRE(out.ok());
  CHECK(TensorsEqual(out->fetches[0], Tensor::FromVector<float>({20, 40})));
  CHECK(TensorsEqual(out->fetches[1], Tensor::FromVector<float>({10, 20})));

  auto wrong_dtype = s.Run({{"a", Tensor::FromVector<int32_t>({1, 2})}}, {"b"}, {});
  CHECK(wrong_dtype.status().code() == Code::kInvalidArgument);
  CHECK(wrong_dtype.status().message().find("feed 'a:0' is int32") != std::string::npos);
  auto wrong_shape = s.Run({{"a", Tensor::FromVector<float>({1, 2, 3})}}, {"b"}, {});
  CHECK(wrong_shape.status().code() == Code::kInvalidArgument);
  CHECK(wrong_shape.status().message().find("[3]") != std::string::npos);
  CHECK(s.Run({}, {"nope"}, {}).status().code() == Code::kNotFound);
  CHECK(s.Run({{"ghost", Tensor::Scalar(1.0f)}}, {"b"}, {}).status().code() == Code::kNotFound);
  CHECK(s.Run({}, {}, {"nope"}).status().message().find("target 'nope'") != std::string::npos);
}

TEST_CASE("the first error fails the step, names the node and cancels waiters") {
  Fixture f;
  LocalSession s(f.registry, f.env, f.pool);
  REQUIRE(s.Create(f.Parse(std::string("(nodes = [") + kConstA + R"g(,
      (name = "bad", op = "TFail", inputs = ["a:0"]),
      (name = "waiter", op = "TWait")]))g")).ok());
  auto out = s.Run({}, {"waiter"}, {"bad"});
  REQUIRE(!out.ok());
  CHECK(out.status().code() == Code::kInvalidArgument);
  CHECK(out.status().message().find("node 'bad' (TFail)") != std::string::npos);
  // ... and in the details, which the master decides on.
  CHECK(out.status().node() == "bad");
  CHECK(out.status().op() == "TFail");
}

TEST_CASE("a step past its deadline ends with DEADLINE_EXCEEDED naming what waited") {
  Fixture f;
  LocalSession s(f.registry, f.env, f.pool);
  REQUIRE(s.Create(f.Parse(R"g((nodes = [(name = "waiter", op = "TWait")]))g")).ok());
  LocalSession::RunOptions options;
  options.deadline = 200ms;
  auto out = s.Run({}, {"waiter"}, {}, options);
  REQUIRE(!out.ok());
  CHECK(out.status().code() == Code::kDeadlineExceeded);
  CHECK(out.status().message().find("node 'waiter' (TWait)") != std::string::npos);
  CHECK(out.status().message().find("test event") != std::string::npos);
  CHECK(out.status().node() == "waiter");
  CHECK(out.status().op() == "TWait");
}

TEST_CASE("a step cancelled from outside ends with the caller's reason") {
  Fixture f;
  auto g = Graph::Build(f.Parse(R"g((nodes = [(name = "waiter", op = "TWait")]))g"), f.registry);
  REQUIRE(g.ok());
  auto exec = Executor::Create(std::make_shared<const Graph>(std::move(g).value()),
                               {&f.registry, &f.env, &f.pool, kDeviceCpu, "cpu"});
  REQUIRE(exec.ok());
  CancellationManager cm;
  std::promise<Status> result;
  (*exec)->RunAsync({.step_id = 1, .cancellation = &cm},
                    [&](const Status& s, StepStats) { result.set_value(s); });
  cm.Cancel(errors::Cancelled("client went away"));
  auto future = result.get_future();
  REQUIRE(future.wait_for(10s) == std::future_status::ready);
  Status s = future.get();
  CHECK(s.code() == Code::kCancelled);
  CHECK(s.message().find("client went away") != std::string::npos);
}

TEST_CASE("a step whose caller says it was interrupted ends CANCELLED; the session goes on") {
  Fixture f;
  LocalSession s(f.registry, f.env, f.pool);
  REQUIRE(s.Create(f.Parse(std::string("(nodes = [") + kConstA +
                           R"g(, (name = "waiter", op = "TWait")]))g"))
              .ok());
  int asked = 0;
  LocalSession::RunOptions options;
  options.deadline = 60s;  // not what ends it
  options.interrupted = [&asked] { return ++asked == 3; };
  auto out = s.Run({}, {"waiter"}, {}, options);
  REQUIRE(!out.ok());
  CHECK(out.status().code() == Code::kCancelled);
  CHECK(out.status().message().find("was interrupted") != std::string::npos);
  CHECK(asked == 3);  // asked until it said so, then no more
  auto next = s.Run({}, {"a"}, {});
  REQUIRE(next.ok());
  CHECK(TensorsEqual(next->fetches[0], Tensor::FromVector<float>({1, 2})));
}

TEST_CASE("a traced step records every node it ran") {
  Fixture f;
  LocalSession s(f.registry, f.env, f.pool);
  REQUIRE(s.Create(f.Parse(std::string("(nodes = [") + kConstA + R"g(,
      (name = "b", op = "TAdd", inputs = ["a", "a"])]))g")).ok());
  LocalSession::RunOptions options;
  options.trace = true;
  auto out = s.Run({}, {"b"}, {}, options);
  REQUIRE(out.ok());
  std::vector<std::string> names;
  for (const auto& n : out->stats.nodes) {
    names.push_back(n.node);
    CHECK(n.end_micros >= n.start_micros);
  }
  CHECK(std::count(names.begin(), names.end(), "a") == 1);
  CHECK(std::count(names.begin(), names.end(), "b") == 1);
}

// The step's last references may go on a pool thread just after Run has
// returned, so the budget settles soon after, not at once.
bool BudgetSettlesAt(const MemoryBudget& budget, uint64_t bytes) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (budget.used() != bytes && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  return budget.used() == bytes;
}

TEST_CASE("a step whose live outputs would pass the memory budget fails naming the node") {
  Fixture f;
  // b (8 bytes) is still needed by d when c asks for its 8 bytes.
  const GraphDef graph = f.Parse(std::string("(nodes = [") + kConstA + R"g(,
      (name = "b", op = "TAdd", inputs = ["a", "a"]),
      (name = "c", op = "TAdd", inputs = ["a", "b"]),
      (name = "d", op = "TAdd", inputs = ["b", "c"])]))g");
  f.env.memory = std::make_shared<MemoryBudget>(12);
  LocalSession s(f.registry, f.env, f.pool);
  REQUIRE(s.Create(graph).ok());
  auto out = s.Run({}, {"d"}, {});
  REQUIRE(!out.ok());
  CHECK(out.status().code() == Code::kResourceExhausted);
  CHECK(out.status().message().find("node 'c' (TAdd): output 0 of 'c': float32[2]: 8 bytes more "
                                    "would pass the task's memory budget: 8 bytes of 12 bytes in "
                                    "use") != std::string::npos);
  CHECK(BudgetSettlesAt(*f.env.memory, 0));  // the step's tensors gave their bytes back
  // With room for both, the same step runs, and leaves only what it returned.
  f.env.memory = std::make_shared<MemoryBudget>(24);
  LocalSession roomy(f.registry, f.env, f.pool);
  REQUIRE(roomy.Create(graph).ok());
  {
    auto fine = roomy.Run({}, {"d"}, {});
    REQUIRE(fine.ok());
    CHECK(BudgetSettlesAt(*f.env.memory, 8));  // d, held by the fetch
  }
  CHECK(BudgetSettlesAt(*f.env.memory, 0));
}

// An executor for `graph`, on the fixture's pool.
std::unique_ptr<Executor> MakeExecutor(Fixture& f, GraphDef graph) {
  auto g = Graph::Build(std::move(graph), f.registry);
  INFO(g.status().ToString());
  REQUIRE(g.ok());
  auto exec = Executor::Create(std::make_shared<const Graph>(std::move(g).value()),
                               {&f.registry, &f.env, &f.pool, kDeviceCpu, "cpu"});
  REQUIRE(exec.ok());
  return std::move(exec).value();
}

// n nodes of `op`, each after the one before it by a control edge.
GraphDef ControlChain(const std::string& op, int n) {
  GraphDef g;
  for (int i = 0; i < n; ++i) {
    NodeDef node{.name = "n" + std::to_string(i), .op = op};
    if (i > 0) node.inputs.push_back("^n" + std::to_string(i - 1));
    g.nodes.push_back(std::move(node));
  }
  return g;
}

TEST_CASE("a step of cheap kernels ends on the caller's thread, before RunAsync returns") {
  // What lets a task answer an empty step without waking a pool thread.
  Fixture f;
  for (const char* op : {"TTick", "TReady"}) {
    auto exec = MakeExecutor(f, ControlChain(op, 3));
    CancellationManager cm;
    std::optional<std::thread::id> ended_on;
    Status status = errors::Internal("not run");
    (*exec).RunAsync({.step_id = 1, .cancellation = &cm,
                      .deadline = std::chrono::steady_clock::now() + 10s},
                     [&](const Status& s, StepStats) {
                       status = s;
                       ended_on = std::this_thread::get_id();
                     });
    INFO(op);
    REQUIRE(ended_on.has_value());
    CHECK(*ended_on == std::this_thread::get_id());
    CHECK(status.ok());
  }
}

// Runs `exec` as a task's event loop does: RunAsync, then waiting apart.
Status RunOnLoop(Executor& exec, int64_t step) {
  CancellationManager cm;
  std::promise<Status> result;
  exec.RunAsync({.step_id = step, .cancellation = &cm,
                 .deadline = std::chrono::steady_clock::now() + 10s},
                [&](const Status& s, StepStats) { result.set_value(s); });
  auto future = result.get_future();
  REQUIRE(future.wait_for(10s) == std::future_status::ready);
  return future.get();
}

Status RunBlocking(Executor& exec, int64_t step) {
  CancellationManager cm;
  return exec.Run({.step_id = step, .cancellation = &cm,
                   .deadline = std::chrono::steady_clock::now() + 10s});
}

// A graph of a cheap root "tick" and, after it, TRecordThread nodes that keep
// their thread busy for 200 µs (so measured expensive): each {name, after}.
GraphDef BusyAfterTick(Fixture& f, const std::vector<std::pair<std::string, std::string>>& busy) {
  std::string text = R"((nodes = [(name = "tick", op = "TTick"))";
  for (const auto& [name, after] : busy) {
    text += R"(, (name = ")" + name + R"(", op = "TRecordThread", inputs = ["^)" + after +
            R"("], attrs = [(name = "busy_us", value = (i = 200))]))";
  }
  return f.Parse(text + "])");
}

// The thread a run-log entry "NAME@THREAD" names.
std::string ThreadOf(const std::string& entry) { return entry.substr(entry.find('@') + 1); }

TEST_CASE("an expensive kernel made ready on an event loop runs on the pool, step after step") {
  // RunAsync's caller is a task's event loop: a long kernel there would hold
  // up every other call the task serves.
  Fixture f;
  auto exec = MakeExecutor(f, BusyAfterTick(f, {{"work", "tick"}}));
  for (int64_t step = 1; step <= 3; ++step) REQUIRE(RunOnLoop(*exec, step).ok());
  const auto order = testing::RecordedOrder(f.resources);
  REQUIRE(order.size() == 3);
  for (const std::string& entry : order) {
    CHECK(entry.rfind("work@", 0) == 0);
    CHECK(entry != "work@" + testing::ThreadTag());
  }
}

TEST_CASE("under a blocking Run, kernels measured cheap run on the caller, side by side too") {
  // TRecordThread is not declared cheap, and takes a few µs. Before it is
  // measured, the caller keeps one of the two and hands the other to the
  // pool; once measured, a hand-off costs more than either, and both run on
  // the caller. On a busy machine the first runs may measure long, so this
  // allows them a number of steps to settle.
  Fixture f;
  auto exec = MakeExecutor(f, f.Parse(R"g((nodes = [
      (name = "tick", op = "TTick"),
      (name = "left", op = "TRecordThread", inputs = ["^tick"]),
      (name = "right", op = "TRecordThread", inputs = ["^tick"])]))g"));
  auto on_caller_in_last_step = [&] {
    const auto order = testing::RecordedOrder(f.resources);
    REQUIRE(order.size() >= 2);
    return (ThreadOf(order[order.size() - 2]) == testing::ThreadTag()) +
           (ThreadOf(order.back()) == testing::ThreadTag());
  };
  REQUIRE(RunBlocking(*exec, 1).ok());
  CHECK(on_caller_in_last_step() == 1);
  bool both = false;
  for (int64_t step = 2; step <= 200 && !both; ++step) {
    REQUIRE(RunBlocking(*exec, step).ok());
    both = on_caller_in_last_step() == 2;
  }
  CHECK(both);
}

TEST_CASE("on an event loop, only kernels declared cheap run inline, measured ones do not") {
  // Measured-cheap kernels on a task's loop cost an unpinned 1 ps + 1 worker
  // 7-9 % of its steps (bench/NOTES.md, "Kernels measured cheap"): a
  // task's loop keeps to the declared ones.
  Fixture f;
  auto exec = MakeExecutor(f, f.Parse(R"g((nodes = [
      (name = "tick", op = "TTick"),
      (name = "work", op = "TRecordThread", inputs = ["^tick"])]))g"));
  for (int64_t step = 1; step <= 20; ++step) REQUIRE(RunOnLoop(*exec, step).ok());
  const auto order = testing::RecordedOrder(f.resources);
  REQUIRE(order.size() == 20);
  for (const std::string& entry : order) CHECK(ThreadOf(entry) != testing::ThreadTag());
}

TEST_CASE("a blocking Run's caller runs a chain of expensive kernels itself") {
  // It would only wait for the pool otherwise: each hand-off is a wake-up.
  Fixture f;
  auto exec = MakeExecutor(f, BusyAfterTick(f, {{"first", "tick"}, {"second", "first"}}));
  for (int64_t step = 1; step <= 2; ++step) REQUIRE(RunBlocking(*exec, step).ok());
  const auto order = testing::RecordedOrder(f.resources);
  REQUIRE(order.size() == 4);
  for (const std::string& entry : order) CHECK(ThreadOf(entry) == testing::ThreadTag());
}

TEST_CASE("expensive kernels side by side still run in parallel under a blocking Run") {
  // The caller keeps one of them, the pool takes the other.
  Fixture f;
  auto exec = MakeExecutor(f, BusyAfterTick(f, {{"left", "tick"}, {"right", "tick"}}));
  for (int64_t step = 1; step <= 2; ++step) {
    REQUIRE(RunBlocking(*exec, step).ok());
    const auto order = testing::RecordedOrder(f.resources);
    REQUIRE(order.size() == static_cast<size_t>(2 * step));
    int on_caller = 0;
    for (size_t i = order.size() - 2; i < order.size(); ++i) {
      on_caller += ThreadOf(order[i]) == testing::ThreadTag();
    }
    CHECK(on_caller == 1);
  }
}

TEST_CASE("with inline_kernels an expensive kernel runs on the thread that made it ready") {
  Fixture f;
  auto g = Graph::Build(f.Parse(R"g((nodes = [
      (name = "tick", op = "TTick"),
      (name = "work", op = "TRecordThread", inputs = ["^tick"])]))g"),
                        f.registry);
  REQUIRE(g.ok());
  Executor::Options options{&f.registry, &f.env, &f.pool, kDeviceCpu, "cpu"};
  options.inline_kernels = true;
  auto exec = Executor::Create(std::make_shared<const Graph>(std::move(g).value()), options);
  REQUIRE(exec.ok());
  for (int64_t step = 1; step <= 2; ++step) {
    CancellationManager cm;
    std::optional<std::thread::id> ended_on;
    Status status = errors::Internal("not run");
    (*exec)->RunAsync({.step_id = step, .cancellation = &cm,
                       .deadline = std::chrono::steady_clock::now() + 10s},
                      [&](const Status& s, StepStats) {
                        status = s;
                        ended_on = std::this_thread::get_id();
                      });
    REQUIRE(ended_on.has_value());  // ended before RunAsync returned
    CHECK(*ended_on == std::this_thread::get_id());
    CHECK(status.ok());
  }
  const auto order = testing::RecordedOrder(f.resources);
  REQUIRE(order.size() == 2);
  CHECK(order[0] == "work@" + testing::ThreadTag());
  CHECK(order[1] == "work@" + testing::ThreadTag());
}

TEST_CASE("kernels run inline for a process on one CPU unless a pool size is asked for") {
  // NumAllowedCpus reads the calling thread's mask: pin a thread of our own.
  const std::vector<int> cpus = AllowedCpus();
  REQUIRE(!cpus.empty());
  bool pin_ok = false, pinned_default = false, pinned_one_thread = true, pinned_two = true;
  std::thread pinned([&] {  // Catch's macros stay on the test's thread
    pin_ok = PinSelf(cpus.front()).ok();
    pinned_default = InlineKernelsFor(0);
    pinned_one_thread = InlineKernelsFor(1);
    pinned_two = InlineKernelsFor(2);
  });
  pinned.join();
  REQUIRE(pin_ok);
  CHECK(pinned_default);
  CHECK_FALSE(pinned_one_thread);  // --threads 1 keeps a pool of one
  CHECK_FALSE(pinned_two);
  // Unpinned, it depends on the machine: inline only where one CPU is all there is.
  CHECK(InlineKernelsFor(0) == (cpus.size() == 1));
}

TEST_CASE("a long chain of kernels done at once does not deepen the stack") {
  // 200,000 asynchronous kernels whose callbacks run inside ComputeAsync:
  // handled by recursion, this would overflow any thread's stack.
  Fixture f;
  auto exec = MakeExecutor(f, ControlChain("TReady", 200000));
  CancellationManager cm;
  StepStats stats;
  Status s = exec->Run({.step_id = 1, .cancellation = &cm,
                        .deadline = std::chrono::steady_clock::now() + 60s},
                       &stats);
  CHECK(s.ok());
  // And twice in a row on the same executor, from a pool thread this time.
  std::promise<Status> result;
  boost::asio::post(f.pool, [&] {
    exec->RunAsync({.step_id = 2, .cancellation = &cm,
                    .deadline = std::chrono::steady_clock::now() + 60s},
                   [&](const Status& st, StepStats) { result.set_value(st); });
  });
  auto future = result.get_future();
  REQUIRE(future.wait_for(60s) == std::future_status::ready);
  CHECK(future.get().ok());
}

}  // namespace
}  // namespace tfd
