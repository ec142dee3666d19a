// A master reaches its peers again after they were down, however many times
// it failed to reach them before and however its clients went away, and
// every call through it waits for its own deadline: issue 9, item 1.
#include <catch2/catch.hpp>
#include <atomic>
#include <chrono>
#include <thread>

#include "tests/integration/child_process.h"
#include "tests/integration/cluster_fixture.h"
#include "tests/integration/graph_helpers.h"
#include "tests/integration/raw_socket.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;
using testing::ChildProcess;
using testing::Const;
using testing::LocalCluster;
using testing::Node;
using testing::TfctlBinary;

const std::string kWorker1 = "/job:worker/replica:0/task:1";

// y on worker:1 reads x from worker:0: a run through worker:0's master needs
// worker:1.
GraphDef AcrossWorkers() {
  GraphDef g;
  g.nodes = {Const("x", 4.0f, "/job:worker/task:0"),
             Node("y", "Identity", {"x"}, "/job:worker/task:1")};
  return g;
}

// One run of AcrossWorkers through worker:0 by a client of its own, which
// goes away right after, as a `tfctl submit` does.
StatusOr<float> RunOnce(LocalCluster& cluster, std::chrono::milliseconds step_timeout) {
  TFD_ASSIGN_OR_RETURN(auto client, cluster.Connect("worker", 0));
  TFD_RETURN_IF_ERROR(client->CreateSession(AcrossWorkers(), step_timeout));
  TFD_ASSIGN_OR_RETURN(auto out, client->Run({}, {"y"}, {}, {}));
  return out.fetches[0].scalar<float>();
}

TEST_CASE("after two failed runs by clients that left, a master reaches a task started since") {
  LocalCluster cluster({{"worker", 2}});
  REQUIRE(cluster.Start("worker", 0).ok());
  for (int i = 0; i < 2; ++i) {
    auto failed = RunOnce(cluster, 1500ms);
    CHECK(failed.status().code() == Code::kUnavailable);
    CHECK(failed.status().message().find(kWorker1) != std::string::npos);
  }
  REQUIRE(cluster.Start("worker", 1).ok());
  auto out = RunOnce(cluster, 10s);
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK(*out == 4.0f);
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  CHECK((*client)->WaitCluster(10s).status().ok());
}

TEST_CASE("after failed runs, a run waits its whole deadline for a task that comes up late") {
  LocalCluster cluster({{"worker", 2}});
  REQUIRE(cluster.Start("worker", 0).ok());
  for (int i = 0; i < 3; ++i) {
    CHECK(RunOnce(cluster, 1s).status().code() == Code::kUnavailable);
  }
  // The task comes up a while into a run whose deadline is long enough: the
  // run must wait for it rather than fail on what earlier runs saw. A
  // stand-in on its port sees the run's first try to reach it, then keeps
  // it down (turning the run's tries away) for 2 s of the run, past the
  // earlier runs' deadlines.
  testing::StandIn stand_in(cluster.Address("worker", 1));
  REQUIRE(stand_in.listening());
  std::atomic<bool> waiting{false};
  std::thread starter([&cluster, &stand_in, &waiting] {
    waiting = stand_in.WaitConnection(20s);
    const auto up_at = std::chrono::steady_clock::now() + 2s;
    while (std::chrono::steady_clock::now() < up_at) {
      stand_in.WaitConnection(std::chrono::duration_cast<std::chrono::milliseconds>(
          up_at - std::chrono::steady_clock::now()));
    }
    stand_in.Close();
    (void)cluster.Spawn("worker", 1);
  });
  auto out = RunOnce(cluster, 20s);
  starter.join();
  CHECK(waiting);
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK(*out == 4.0f);
}

TEST_CASE("barriers abandoned by their clients during an outage succeed once the task is back") {
  LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.StartAll().ok());
  const std::string target = cluster.Address("worker", 0);
  cluster.Kill("ps", 0);
  // Clients that give up (Ctrl-C, a killed script) while the master is
  // still trying to reach the ps: twice, with each barrier.
  for (const char* what : {"cluster", "init", "cluster", "init"}) {
    auto waiting = ChildProcess::Spawn(
        {TfctlBinary(), "wait", what, "--target", target, "--timeout", "3"});
    REQUIRE(waiting.ok());
    std::this_thread::sleep_for(700ms);
    (*waiting)->Kill();
  }
  // And a barrier that ran out while the ps was down.
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  Status down = (*client)->WaitCluster(1s).status();
  CHECK(down.code() == Code::kDeadlineExceeded);
  CHECK(down.message().find("/job:ps/replica:0/task:0") != std::string::npos);

  REQUIRE(cluster.Start("ps", 0).ok());
  Status up = (*client)->WaitCluster(10s).status();
  INFO(up.ToString());
  CHECK(up.ok());
  auto ready = testing::RunProcess(
      {TfctlBinary(), "wait", "cluster", "--target", target, "--timeout", "10"}, 60s);
  REQUIRE(ready.ok());
  INFO("stderr: " << testing::OneLine(ready->err));
  CHECK(ready->exit_status == 0);

  // A second outage while recovering from the first.
  cluster.Kill("ps", 0);
  CHECK((*client)->WaitCluster(1s).status().code() == Code::kDeadlineExceeded);
  REQUIRE(cluster.Start("ps", 0).ok());
  Status again = (*client)->WaitCluster(10s).status();
  INFO(again.ToString());
  CHECK(again.ok());
}

}  // namespace
}  // namespace tfd
