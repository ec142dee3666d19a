// Tasks allowed one CPU only (taskset, a cpuset, a benchmark's pinning) run
// every kernel on the thread that made it ready, the event loop mostly,
// instead of handing expensive ones to a compute pool (Executor's
// InlineKernelsFor). Checked on real tfd processes: they say so in their
// log, train to the very values an unpinned cluster reaches, and a step
// waiting in a queue on the pinned ps does not hold up the step that fills
// it, because an asynchronous wait holds no thread even there.
#include <catch2/catch.hpp>

#include <cstring>
#include <future>
#include <thread>

#include "common/allowed_cpus.h"
#include "tests/integration/cluster_fixture.h"
#include "tests/integration/graph_helpers.h"
#include "tests/integration/sgd_steps.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;
using testing::LocalCluster;
using testing::SgdQueueGraph;

constexpr char kInlineNote[] = "kernels run on the thread that made them ready";

// The variable after each of `steps` training steps, fetched through the
// worker (the master).
std::vector<std::vector<float>> Train(LocalCluster& cluster, int steps) {
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  return testing::SgdSteps(**client, steps);
}

TEST_CASE("tasks pinned to one CPU run kernels inline and train to the values of unpinned "
          "ones") {
  const std::vector<int> cpus = AllowedCpus();
  REQUIRE(!cpus.empty());
  // One cluster at a time: each fixture has its own event loop, and a
  // thread may have only one.
  auto train = [&](bool pin) {
    LocalCluster cluster({{"ps", 1}, {"worker", 1}});
    if (pin) cluster.PinTo(cpus.back());
    REQUIRE(cluster.StartAll().ok());
    for (const char* job : {"ps", "worker"}) {
      INFO(job << (pin ? ", pinned" : ", unpinned"));
      const bool says_inline = cluster.Log(job, 0).find(kInlineNote) != std::string::npos;
      // Unpinned they keep the pool, unless one CPU is all this machine gives.
      CHECK(says_inline == (pin || cpus.size() == 1));
    }
    return Train(cluster, 30);
  };
  const auto expected = train(false);
  const auto got = train(true);
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("step " << i);
    CHECK(std::memcmp(got[i].data(), expected[i].data(), 16 * sizeof(float)) == 0);
  }
  CHECK(expected.front() != expected.back());  // it did train
}

TEST_CASE("a step waiting in a queue on a pinned ps lets the step that fills it run, twice") {
  const std::vector<int> cpus = AllowedCpus();
  REQUIRE(!cpus.empty());
  LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  cluster.PinTo(cpus.back());
  REQUIRE(cluster.StartAll().ok());
  auto filler = cluster.Connect("worker", 0);
  REQUIRE(filler.ok());
  REQUIRE((*filler)->CreateSession(SgdQueueGraph(), 20s).ok());
  auto ps = cluster.Connect("ps", 0);
  REQUIRE(ps.ok());
  // Partitions the ps has started for a master over the step channel.
  auto started_on_ps = [&]() -> uint64_t {
    auto status = (*ps)->GetStatus(5s);
    REQUIRE(status.ok());
    return status->data_plane.steps_served;
  };
  const std::string address = cluster.Address("worker", 0);
  for (int round = 0; round < 2; ++round) {
    INFO("round " << round);
    const uint64_t before = started_on_ps();
    // The waiting step, from its own thread and event loop (joined however
    // the round ends).
    testing::QueueTaker taker(address, 30s);
    auto& result = taker.result();
    // Its partition has started on the ps, where it waits in the empty
    // queue: not answered before the queue is filled ...
    const auto until = std::chrono::steady_clock::now() + 20s;
    while (started_on_ps() == before && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(10ms);
    }
    REQUIRE(started_on_ps() == before + 1);
    CHECK(result.wait_for(300ms) == std::future_status::timeout);
    // ... and answered once it is, by a step on the same pinned tasks.
    auto put = (*filler)->Run({}, {}, {"put"}, {.timeout = 10s});
    INFO(put.status().ToString());
    CHECK(put.ok());
    REQUIRE(result.wait_for(20s) == std::future_status::ready);
    const StatusOr<float> value = result.get();
    INFO(value.status().ToString());
    REQUIRE(value.ok());
    CHECK(*value == 5.0f);
  }
}

}  // namespace
}  // namespace tfd
