// The step channel between real tfd processes (daemon/distributed/
// step_channel.h): a master's partitions on other tasks run with one
// data-plane message each way, traced or not, over shared memory and over
// a stream alike (--data-plane-transports=stream: the way to a task on
// another host); over streams a task connects back to its master only to
// push tensors there (it answers on the master's stream); a task that dies
// mid-step fails the step
// with UNAVAILABLE (not at its deadline), again after a restart, and the
// restarted task serves the channel again.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>

#include "tests/integration/cluster_fixture.h"
#include "tests/integration/graph_helpers.h"
#include "tests/integration/proc_sockets.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;
using testing::Const;
using testing::LocalCluster;
using testing::Node;

const char kPs[] = "/job:ps/replica:0/task:0";

// A counter on the ps, bumped by each run and read on the worker; and a
// queue on the ps that nothing fills, for a step that blocks there.
GraphDef CounterGraph() {
  GraphDef g;
  g.nodes = {
      Node("count", "VariableV2", {}, "/job:ps",
           {{"dtype", DType::kFloat32}, {"shape", PartialShape(std::vector<int64_t>{})}}),
      Const("zero", 0.0f, "/job:ps"),
      Const("one", 1.0f, "/job:ps"),
      Node("init", "Assign", {"count", "zero"}, "/job:ps"),
      Node("bump", "AssignAdd", {"count", "one"}, "/job:ps"),
      Node("seen", "Identity", {"bump"}, "/job:worker"),
      Node("queue", "FIFOQueue", {}, "/job:ps",
           {{"component_types", std::vector<DType>{DType::kFloat32}},
            {"shapes", std::vector<PartialShape>{PartialShape({})}},
            {"capacity", int64_t{2}}}),
      Node("take", "QueueDequeue", {"queue"}, "/job:ps",
           {{"component_types", std::vector<DType>{DType::kFloat32}}}),
      Node("taken", "Identity", {"take"}, "/job:worker"),
  };
  return g;
}

uint64_t StepsServed(LocalCluster& cluster, const std::string& job) {
  auto client = cluster.Connect(job, 0);
  REQUIRE(client.ok());
  auto status = (*client)->GetStatus(5s);
  INFO(status.status().ToString());
  REQUIRE(status.ok());
  return status->data_plane.steps_served;
}

// Waits, polling from a thread of its own, until the task at `address` has
// served at least `count` steps over the step channel, or `bound` passes;
// whether it had. No Catch2 assertions: callable off the test's thread.
bool WaitStepsServed(const std::string& address, uint64_t count,
                     std::chrono::milliseconds bound) {
  auto io = kj::setupAsyncIo();
  const auto deadline = std::chrono::steady_clock::now() + bound;
  auto client = Client::Connect(io, address, "", bound);
  if (!client.ok()) return false;
  while (std::chrono::steady_clock::now() < deadline) {
    auto status = (*client)->GetStatus(5s);
    if (status.ok() && status->data_plane.steps_served >= count) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

// Runs `n` bumps from worker:0's master; the counter reads 1..n.
void Bump(Client& client, int n) {
  for (int i = 1; i <= n; ++i) {
    auto out = client.Run({}, {"seen"}, {}, {});
    INFO(out.status().ToString());
    REQUIRE(out.ok());
    CHECK(out->fetches[0].scalar<float>() == static_cast<float>(i));
  }
}

TEST_CASE("partitions on other tasks run over the step channel, traced or not, over shared "
          "memory and over a stream alike") {
  for (const bool stream : {false, true}) {
    DYNAMIC_SECTION((stream ? "over a stream" : "over shared memory")) {
      LocalCluster cluster({{"ps", 1}, {"worker", 1}},
                           stream ? std::vector<std::string>{"--data-plane-transports=stream"}
                                  : std::vector<std::string>{});
      REQUIRE(cluster.StartAll().ok());
      auto client = cluster.Connect("worker", 0);
      REQUIRE(client.ok());
      REQUIRE((*client)->CreateSession(CounterGraph(), 20s).ok());
      REQUIRE((*client)->Run({}, {}, {"init"}, {}).ok());
      const uint64_t before = StepsServed(cluster, "ps");
      Bump(**client, 25);
      CHECK(StepsServed(cluster, "ps") == before + 25);
      // A traced run brings the ps's nodes back.
      auto traced = (*client)->Run({}, {"seen"}, {}, {.trace = true});
      REQUIRE(traced.ok());
      CHECK(traced->fetches[0].scalar<float>() == 26.0f);
      std::string bumped_on;
      for (const auto& n : traced->stats.nodes) {
        if (n.node == "bump") bumped_on = n.device;
      }
      CHECK(bumped_on == std::string(kPs) + "/device:CPU:0");
      CHECK(StepsServed(cluster, "ps") == before + 26);
      // A step that fails on the ps fails the run with the ps's error.
      auto timed_out = (*client)->Run({}, {"taken"}, {}, {.timeout = 300ms});
      CHECK(timed_out.status().code() == Code::kDeadlineExceeded);
      CHECK(timed_out.status().message().find("queue") != std::string::npos);
      // ... and the next steps go on.
      auto after = (*client)->Run({}, {"seen"}, {}, {});
      REQUIRE(after.ok());
      CHECK(after->fetches[0].scalar<float>() == 27.0f);
    }
  }
}

// Over streams a task answers its master on the master's own stream: it
// connects back (a login and a stream) only to push tensors there.
TEST_CASE("over streams a task connects back to its master only to push tensors to it") {
  LocalCluster cluster({{"ps", 1}, {"worker", 1}}, {"--data-plane-transports=stream"});
  REQUIRE(cluster.StartAll().ok());
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  REQUIRE((*client)->CreateSession(CounterGraph(), 20s).ok());
  const pid_t ps = cluster.Pid("ps", 0);
  const std::string master = cluster.Address("worker", 0);
  const int master_port = std::stoi(master.substr(master.rfind(':') + 1));
  const uint64_t before = StepsServed(cluster, "ps");
  REQUIRE((*client)->Run({}, {}, {"init"}, {}).ok());
  for (int i = 0; i < 5; ++i) REQUIRE((*client)->Run({}, {}, {"bump"}, {}).ok());
  CHECK(StepsServed(cluster, "ps") == before + 6);
  CHECK(testing::EstablishedTo(ps, master_port) == 0);
  // A fetch of the counter: the ps pushes its value to the master.
  auto seen = (*client)->Run({}, {"seen"}, {}, {});
  REQUIRE(seen.ok());
  CHECK(seen->fetches[0].scalar<float>() == 6.0f);
  CHECK(testing::EstablishedTo(ps, master_port) == 2);
}

TEST_CASE("a task killed mid-step over the step channel fails it with UNAVAILABLE, twice, and "
          "serves the channel after each restart") {
  LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.StartAll().ok());
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  // A step timeout far beyond the test's: the failure must come from the ps
  // going, not from the deadline.
  REQUIRE((*client)->CreateSession(CounterGraph(), 120s).ok());
  for (int round = 0; round < 2; ++round) {
    INFO("round " << round);
    REQUIRE((*client)->Run({}, {}, {"init"}, {}).ok());
    Bump(**client, 3);
    CHECK(StepsServed(cluster, "ps") >= 3);
    // Blocked on the ps's empty queue, then the ps is killed: once the ps
    // has started the step's partition, which then waits in the queue.
    const uint64_t served = StepsServed(cluster, "ps");
    std::atomic<bool> started{false};
    std::thread killer([&cluster, &started, served] {
      started = WaitStepsServed(cluster.Address("ps", 0), served + 1, 20s);
      cluster.Kill("ps", 0);
    });
    auto blocked = (*client)->Run({}, {"taken"}, {}, {});
    killer.join();
    REQUIRE(started);  // killed mid-step, not before it
    INFO(blocked.status().ToString());
    CHECK(blocked.status().code() == Code::kUnavailable);
    CHECK(blocked.status().message().find(kPs) != std::string::npos);
    // While it is down, runs fail the same way; then it comes back.
    auto down = (*client)->Run({}, {"seen"}, {}, {.timeout = 2s});
    CHECK_FALSE(down.ok());
    REQUIRE(cluster.Start("ps", 0).ok());
    // The new ps registers the partition again and serves it on the channel.
    auto again = (*client)->Run({}, {}, {"init"}, {});
    INFO(again.status().ToString());
    REQUIRE(again.ok());
    Bump(**client, 3);
    CHECK(StepsServed(cluster, "ps") == 4);  // init and three bumps, on the new ps
  }
}

}  // namespace
}  // namespace tfd
