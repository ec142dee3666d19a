// A worker task hosted in the training program's own process (TaskHost, as
// train_bench runs it and TensorFlow's in-process server did) beside a real
// tfd ps: it trains to the values a tfd worker reaches, serves other clients
// over its socket like any task, fails a step loudly when its ps dies (and
// trains again once the ps is back, twice), says why it cannot start, and
// on Drain cancels the steps it was still running.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <future>
#include <thread>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "daemon/task_host.h"
#include "daemon/tfd_config.h"
#include "tests/integration/cluster_fixture.h"
#include "tests/integration/graph_helpers.h"
#include "tests/integration/sgd_steps.h"
#include "tests/integration/temp_dir.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;
using testing::LocalCluster;
using testing::SgdQueueGraph;
using testing::SgdSteps;

constexpr char kWorker[] = "/job:worker/replica:0/task:0";

// worker:0 of `cluster`'s spec, configured as tfd would be by these flags.
TfdConfig WorkerConfig(const LocalCluster& cluster, std::vector<std::string> flags = {}) {
  std::vector<std::string> args{"--cluster", cluster.spec().ToJson(), "--job", "worker", "--task",
                                "0"};
  args.insert(args.end(), flags.begin(), flags.end());
  auto config = ParseTfdFlags(args, [](const char*) -> const char* { return nullptr; });
  INFO(config.status().ToString());
  REQUIRE(config.ok());
  return *config;
}

// The host's log lines, for what it says about itself.
struct Log {
  std::ostringstream lines;
  std::shared_ptr<spdlog::logger> logger = std::make_shared<spdlog::logger>(
      "worker:0", std::make_shared<spdlog::sinks::ostream_sink_mt>(lines));
};

uint64_t StepsServed(LocalCluster& cluster) {
  auto ps = cluster.Connect("ps", 0);
  REQUIRE(ps.ok());
  auto status = (*ps)->GetStatus(5s);
  REQUIRE(status.ok());
  return status->data_plane.steps_served;
}

TEST_CASE("a worker hosted in this process trains as a tfd worker does and serves other "
          "clients") {
  std::vector<std::vector<float>> expected;
  {
    LocalCluster cluster({{"ps", 1}, {"worker", 1}});
    REQUIRE(cluster.StartAll().ok());
    auto client = cluster.Connect("worker", 0);
    REQUIRE(client.ok());
    expected = SgdSteps(**client, 30);
  }
  LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.Start("ps", 0).ok());
  Log log;
  auto host = TaskHost::Start(WorkerConfig(cluster), cluster.io(), log.logger);
  INFO(host.status().ToString());
  REQUIRE(host.ok());
  CHECK(log.lines.str().find("listening on " + cluster.Address("worker", 0)) !=
        std::string::npos);
  auto local = (*host)->LocalClient();
  CHECK(local->task() == kWorker);

  const uint64_t served_before = StepsServed(cluster);
  const auto got = SgdSteps(*local, 30);
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("step " << i);
    CHECK(std::memcmp(got[i].data(), expected[i].data(), 16 * sizeof(float)) == 0);
  }
  CHECK(expected.front() != expected.back());  // it did train
  // The ps ran its partitions for the hosted master over the step channel.
  CHECK(StepsServed(cluster) >= served_before + 30);

  // Over its socket it is a task like any other: this process, and a step
  // of another client's session sees what the local client trained.
  auto remote = cluster.Connect("worker", 0);
  REQUIRE(remote.ok());
  auto status = (*remote)->GetStatus(5s);
  REQUIRE(status.ok());
  CHECK(status->task == kWorker);
  CHECK(status->pid == getpid());
  REQUIRE((*remote)->CreateSession(SgdQueueGraph(), 20s).ok());
  auto w = (*remote)->Run({}, {"w"}, {}, {.timeout = 10s});
  INFO(w.status().ToString());
  REQUIRE(w.ok());
  CHECK(std::memcmp(w->fetches[0].data<float>(), got.back().data(), 16 * sizeof(float)) == 0);

  remote->reset();
  local.reset();
  (*host)->Drain();
}

TEST_CASE("a hosted worker whose ps dies fails the step, and trains again once it is back, "
          "twice") {
  LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.Start("ps", 0).ok());
  Log log;
  auto host = TaskHost::Start(WorkerConfig(cluster), cluster.io(), log.logger);
  REQUIRE(host.ok());
  auto client = (*host)->LocalClient();
  SgdSteps(*client, 3);
  testing::KillPsAndTrainAgain(cluster, *client, 2);
  client.reset();
  (*host)->Drain();
}

TEST_CASE("a host that cannot start says why, twice, and the next one starts") {
  LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.Start("ps", 0).ok());
  testing::TempDir dir;
  {
    // Its address taken by another task.
    Log first;
    auto taken = TaskHost::Start(WorkerConfig(cluster), cluster.io(), first.logger);
    REQUIRE(taken.ok());
    Log second;
    auto again = TaskHost::Start(WorkerConfig(cluster), cluster.io(), second.logger);
    REQUIRE(!again.ok());
    CHECK(again.status().code() == Code::kUnavailable);
    CHECK(again.status().message().find("cannot listen on " + cluster.Address("worker", 0)) !=
          std::string::npos);
  }
  {
    // A checkpoint directory that is a file.
    const std::string file = dir.path() + "/not-a-directory";
    std::ofstream(file) << "x";
    Log log;
    auto bad = TaskHost::Start(WorkerConfig(cluster, {"--checkpoint-dir", file}), cluster.io(),
                               log.logger);
    REQUIRE(!bad.ok());
    CHECK(bad.status().message().find("checkpoint directory") != std::string::npos);
    CHECK(bad.status().message().find(file) != std::string::npos);
  }
  Log log;
  auto host = TaskHost::Start(WorkerConfig(cluster), cluster.io(), log.logger);
  INFO(host.status().ToString());
  REQUIRE(host.ok());
  auto client = (*host)->LocalClient();
  const auto values = SgdSteps(*client, 3);
  CHECK(values.front() != values.back());
  client.reset();
  (*host)->Drain();
}

TEST_CASE("draining a host cancels the steps it still runs after the grace, and their "
          "clients hear why") {
  LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.Start("ps", 0).ok());
  Log log;
  auto host = TaskHost::Start(WorkerConfig(cluster), cluster.io(), log.logger);
  REQUIRE(host.ok());
  const std::string address = cluster.Address("worker", 0);
  // A step through the hosted master that waits in the ps's empty queue.
  testing::QueueTaker taker(address, 60s);
  auto& result = taker.result();
  // Until it runs on the hosted master, the loop must turn for it.
  const auto until = std::chrono::steady_clock::now() + 20s;
  while ((*host)->env().steps.size() == 0 && std::chrono::steady_clock::now() < until) {
    cluster.io().provider->getTimer().afterDelay(10 * kj::MILLISECONDS).wait(cluster.io().waitScope);
  }
  REQUIRE((*host)->env().steps.size() > 0);
  (*host)->Drain();
  CHECK((*host)->env().steps.size() == 0);
  CHECK(log.lines.str().find("cancelling the steps still running: 1 of this task's master, 1 "
                             "partition(s) here") != std::string::npos);
  // The answer travels on the host's loop, which keeps turning until it has.
  while (result.wait_for(0ms) != std::future_status::ready &&
         std::chrono::steady_clock::now() < until + 20s) {
    cluster.io().provider->getTimer().afterDelay(10 * kj::MILLISECONDS).wait(cluster.io().waitScope);
  }
  REQUIRE(result.wait_for(0ms) == std::future_status::ready);
  const Status s = result.get().status();
  INFO(s.ToString());
  CHECK(!s.ok());
  CHECK(s.message().find("shutting down") != std::string::npos);
}

}  // namespace
}  // namespace tfd
