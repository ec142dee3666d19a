// --spin-wait-us on real tasks: a tfd ps and worker, and a worker hosted in
// this process, whose event loops poll before they sleep
// (daemon/rpc/spin_wait.h). They train to the very values of tasks that
// sleep at once, with a compute pool handing results across threads and
// pinned to one CPU that both share, and stop on SIGTERM while polling. That
// they poll, not sleep, between the messages of consecutive steps shows in
// their voluntary context switches: a sleeping event loop makes at least one
// per step. A polling worker whose polling ps is killed, twice, fails the
// step and trains again once the ps is back.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>

#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include "common/allowed_cpus.h"
#include "daemon/task_host.h"
#include "daemon/tfd_config.h"
#include "tests/integration/cluster_fixture.h"
#include "tests/integration/sgd_steps.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;
using testing::LocalCluster;
using Values = std::vector<std::vector<float>>;

constexpr int kSteps = 30;
// The most a task may poll: longer than any of these steps' waits, so a
// polling task does not sleep between them.
const std::string kSpin = "--spin-wait-us=" + std::to_string(kMaxSpinWait.count());

// voluntary_ctxt_switches of a /proc/.../status file: how often that thread
// went to sleep.
int64_t VoluntarySwitches(const std::string& status_path) {
  std::ifstream in(status_path);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("voluntary_ctxt_switches:", 0) == 0) {
      return std::stoll(line.substr(line.find(':') + 1));
    }
  }
  FAIL("no voluntary_ctxt_switches in " << status_path);
  return -1;
}

void CheckSame(const Values& got, const Values& expected) {
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("step " << i);
    CHECK(std::memcmp(got[i].data(), expected[i].data(), 16 * sizeof(float)) == 0);
  }
  CHECK(expected.front() != expected.back());  // it did train
}

// kSteps steps on a 1 ps + 1 worker cluster of tfds started with `flags`
// (pinned to `cpu` unless -1). Reports how often the ps's event loop (its
// main thread) slept during them, then stops both tasks with SIGTERM.
Values TrainOnTfds(const std::vector<std::string>& flags, int cpu, int64_t* ps_sleeps) {
  LocalCluster cluster({{"ps", 1}, {"worker", 1}}, flags);
  if (cpu >= 0) cluster.PinTo(cpu);
  REQUIRE(cluster.StartAll().ok());
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  const std::string ps_status = "/proc/" + std::to_string(cluster.Pid("ps", 0)) + "/status";
  // The session and its first step (placement, connections) happen before
  // the count starts.
  testing::SgdSteps(**client, 1);
  const int64_t before = VoluntarySwitches(ps_status);
  Values values = testing::SgdSteps(**client, kSteps);
  *ps_sleeps = VoluntarySwitches(ps_status) - before;
  for (const char* job : {"worker", "ps"}) {
    INFO(job);
    auto exit = cluster.Stop(job, 0, 10s);
    INFO(exit.status().ToString());
    REQUIRE(exit.ok());
    CHECK(*exit == 0);
    CHECK(cluster.Log(job, 0).find("stopped") != std::string::npos);
  }
  return values;
}

TEST_CASE("tfd tasks that poll before they sleep train to the values of tasks that do not, "
          "with a compute pool and pinned to one shared CPU, and stop on SIGTERM") {
  int64_t sleeps = 0;
  const Values expected = TrainOnTfds({}, -1, &sleeps);
  // Sleeping at once, the ps waits in epoll for every step's start.
  CHECK(sleeps >= kSteps);

  SECTION("unpinned: kernels on the compute pool, their results sent across threads") {
    CheckSame(TrainOnTfds({kSpin, "--threads=2"}, -1, &sleeps), expected);
    CHECK(sleeps < kSteps / 2);
  }
  SECTION("a budget shorter than the kernels: the loop sleeps, and the pool's results wake it") {
    // The MatMuls run on the pool while the loop, its microsecond spent,
    // sleeps: each result reaches it as another thread's wake-up.
    CheckSame(TrainOnTfds({"--spin-wait-us=1", "--threads=2"}, -1, &sleeps), expected);
  }
  SECTION("both tasks pinned to one CPU, each yielding it to the other while it polls") {
    const std::vector<int> cpus = AllowedCpus();
    REQUIRE(!cpus.empty());
    CheckSame(TrainOnTfds({kSpin}, cpus.back(), &sleeps), expected);
    CHECK(sleeps < kSteps / 2);
  }
}

// worker:0 of `cluster`, hosted here with the longest --spin-wait-us.
std::unique_ptr<TaskHost> HostPollingWorker(LocalCluster& cluster) {
  std::vector<std::string> args{"--cluster", cluster.spec().ToJson(), "--job", "worker",
                                "--task", "0", kSpin};
  auto config = ParseTfdFlags(args, [](const char*) -> const char* { return nullptr; });
  REQUIRE(config.ok());
  auto logger = std::make_shared<spdlog::logger>("worker:0",
                                                 std::make_shared<spdlog::sinks::null_sink_mt>());
  auto host = TaskHost::Start(*config, cluster.io(), logger);
  INFO(host.status().ToString());
  REQUIRE(host.ok());
  return std::move(*host);
}

TEST_CASE("a hosted worker with --spin-wait-us polls in its trainer's waits and trains to the "
          "same values") {
  int64_t ps_sleeps = 0;
  const Values expected = TrainOnTfds({}, -1, &ps_sleeps);

  LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.Start("ps", 0).ok());
  auto host = HostPollingWorker(cluster);
  {
    auto client = host->LocalClient();
    testing::SgdSteps(*client, 1);
    // This thread is the hosted task's event loop and its trainer both.
    const int64_t before = VoluntarySwitches("/proc/thread-self/status");
    const Values got = testing::SgdSteps(*client, kSteps);
    const int64_t slept = VoluntarySwitches("/proc/thread-self/status") - before;
    CheckSame(got, expected);
    CHECK(slept < kSteps / 2);
  }
  host->Drain();
}

TEST_CASE("a polling hosted worker whose polling ps is killed fails the step, and trains again "
          "once the ps is back, twice") {
  LocalCluster cluster({{"ps", 1}, {"worker", 1}}, {kSpin});
  REQUIRE(cluster.Start("ps", 0).ok());
  auto host = HostPollingWorker(cluster);
  auto client = host->LocalClient();
  testing::SgdSteps(*client, 3);
  testing::KillPsAndTrainAgain(cluster, *client, 2);
  client.reset();
  host->Drain();
}

}  // namespace
}  // namespace tfd
