// The chaos harness: faults injected one after another while two `tfctl
// train` processes train MNIST on 1 ps + 2 workers with checkpoints — kill
// -9 of the ps, kill -9 of a worker task (each restarted at once, as a
// supervisor would), SIGSTOP of the ps for longer than the step deadline,
// and a dropped link (loopback taken down in a network namespace the test
// makes for itself). After each fault the training must move on again
// within a bound (else it counts as a hang and the test fails); at the end
// both trainers must finish their planned input, the model must have
// learned, and every checkpoint left must verify.
//
// TFD_CHAOS_FAULTS sets the number of faults (default 4, one of each kind:
// the short version CI runs); TFD_CHAOS_REPORT=FILE writes the figures as
// JSON. The 100-fault run and its figures: docs/reliability.md.
#include <catch2/catch.hpp>

#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>

#include "tests/integration/training_fixture.h"

namespace tfd::testing {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kStepTimeoutS = 3;             // the trainers' --step-timeout
constexpr auto kStall = 4s;                  // SIGSTOP and link drops: past it
constexpr auto kRecoveryBound = 90s;         // longer without progress: a hang
constexpr int kProgress = 10;                // global steps that show progress
constexpr int kCheckpointEvery = 20;

int FaultsWanted() {
  const char* v = std::getenv("TFD_CHAOS_FAULTS");
  return v != nullptr && std::atoi(v) > 0 ? std::atoi(v) : 4;
}

// Loopback up or down in this process's network namespace (SIOCSIFFLAGS,
// so no `ip` binary is needed).
Status SetLoopback(bool up) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0) return errors::Internal("socket: ", std::strerror(errno));
  struct ifreq ifr {};
  std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  int rc = ::ioctl(fd, SIOCGIFFLAGS, &ifr);
  if (rc == 0) {
    ifr.ifr_flags = static_cast<short>(up ? (ifr.ifr_flags | IFF_UP) : (ifr.ifr_flags & ~IFF_UP));
    rc = ::ioctl(fd, SIOCSIFFLAGS, &ifr);
  }
  const int err = errno;
  ::close(fd);
  if (rc != 0) return errors::Internal("setting lo ", up ? "up" : "down", ": ", std::strerror(err));
  return OkStatus();
}

// A network namespace of the test's own (with its own loopback), so that
// taking the link down touches nothing else on the host. Needs
// CAP_SYS_ADMIN; the reason when it cannot be had.
std::optional<std::string> EnterOwnNetworkNamespace() {
  if (::unshare(CLONE_NEWNET) != 0) {
    return std::string("unshare(CLONE_NEWNET): ") + std::strerror(errno);
  }
  Status up = SetLoopback(true);
  if (!up.ok()) return up.ToString();
  return std::nullopt;
}

enum class Fault { kKillPs, kKillWorker, kStopPs, kDropLink };

const char* FaultName(Fault f) {
  switch (f) {
    case Fault::kKillPs: return "kill -9 ps";
    case Fault::kKillWorker: return "kill -9 worker";
    case Fault::kStopPs: return "SIGSTOP ps";
    case Fault::kDropLink: return "link down";
  }
  return "?";
}

struct FaultRecord {
  Fault kind;
  std::string target;
  int64_t global_before = -1;  // the last global step read before the fault
  int64_t global_after = -1;   // the first read once the fault was over
  double recover_s = -1;       // fault over -> kProgress more global steps
  bool hang = false;
};

// The global step, or nullopt while the ps does not answer within 2 s or
// its global step is not initialized yet.
std::optional<int64_t> ReadGlobalStep(LocalCluster& cluster) {
  auto ps = cluster.Connect("ps", 0, 2s);
  if (!ps.ok()) return std::nullopt;
  auto v = (*ps)->ReadVariable("global_step", 2s);
  if (!v.ok() || !v->first.initialized) return std::nullopt;
  return v->second.scalar<int64_t>();
}

// Polls until the global step reaches `step`, or `bound` passes, or a
// trainer exits (training over: no fault can be injected any more).
std::optional<int64_t> WaitGlobalStep(LocalCluster& cluster, int64_t step, Clock::duration bound,
                                      const std::vector<std::unique_ptr<ChildProcess>>& runs) {
  const auto deadline = Clock::now() + bound;
  while (Clock::now() < deadline) {
    if (auto g = ReadGlobalStep(cluster); g && *g >= step) return g;
    for (const auto& r : runs) {
      if (!r->running()) return std::nullopt;
    }
    std::this_thread::sleep_for(20ms);
  }
  return std::nullopt;
}

TEST_CASE("chaos: kills, stops and a dropped link during training; no hang, nothing lost") {
  const int faults = FaultsWanted();
  const std::optional<std::string> no_netns = EnterOwnNetworkNamespace();
  if (no_netns) {
    WARN("link faults skipped (reported as such): no network namespace: " << *no_netns);
  }
  TempDir checkpoints;
  TrainingCluster s(2, {"--checkpoint-dir=" + checkpoints.path()});
  REQUIRE(s.cluster.StartAll().ok());
  // Enough input that training outlasts every fault: each needs kProgress
  // steps of progress, and a ps kill may take back kCheckpointEvery more.
  const int planned_global = std::max(480, faults * 4 * (kProgress + kCheckpointEvery + 10));
  const int epochs = (planned_global + 23) / 24;  // 24 global steps per epoch of both shards
  const int per_worker = epochs * kTrain / 2 / kBatch;
  const std::string graph = s.Graph({.workers = 2, .epochs = epochs});
  auto runs = s.SpawnTrainers(
      graph, 2, {"--checkpoint-every", std::to_string(kCheckpointEvery)},
      {"--max-recoveries", std::to_string(4 * faults + 10)}, kStepTimeoutS);

  std::vector<FaultRecord> records;
  const std::vector<Fault> cycle{Fault::kKillPs, Fault::kKillWorker, Fault::kStopPs,
                                 Fault::kDropLink};
  int64_t mark = kProgress;
  for (int i = 0; i < faults; ++i) {
    Fault kind = cycle[static_cast<size_t>(i) % cycle.size()];
    if (kind == Fault::kDropLink && no_netns) kind = Fault::kStopPs;
    FaultRecord r{.kind = kind};
    auto before = WaitGlobalStep(s.cluster, mark, kRecoveryBound, runs);
    INFO("fault " << i << " (" << FaultName(kind) << "): ps log " << OneLine(s.cluster.Log("ps", 0)));
    REQUIRE(before.has_value());  // a hang after the last fault, or training ended too soon
    r.global_before = *before;
    switch (kind) {
      case Fault::kKillPs:
        r.target = "ps:0";
        s.cluster.Kill("ps", 0);
        std::this_thread::sleep_for(200ms);
        REQUIRE(s.cluster.Start("ps", 0).ok());
        break;
      case Fault::kKillWorker: {
        const int task = (i / static_cast<int>(cycle.size())) % 2;
        r.target = "worker:" + std::to_string(task);
        s.cluster.Kill("worker", task);
        std::this_thread::sleep_for(200ms);
        REQUIRE(s.cluster.Start("worker", task).ok());
        break;
      }
      case Fault::kStopPs: {
        r.target = "ps:0";
        const pid_t pid = s.cluster.Pid("ps", 0);
        REQUIRE(pid > 0);
        REQUIRE(::kill(pid, SIGSTOP) == 0);
        std::this_thread::sleep_for(kStall);
        REQUIRE(::kill(pid, SIGCONT) == 0);
        break;
      }
      case Fault::kDropLink:
        r.target = "lo";
        REQUIRE(SetLoopback(false).ok());
        std::this_thread::sleep_for(kStall);
        REQUIRE(SetLoopback(true).ok());
        break;
    }
    const auto over = Clock::now();
    auto after = WaitGlobalStep(s.cluster, 0, kRecoveryBound, runs);
    REQUIRE(after.has_value());
    r.global_after = *after;
    auto moved = WaitGlobalStep(s.cluster, *after + kProgress, kRecoveryBound, runs);
    r.hang = !moved.has_value();
    r.recover_s = std::chrono::duration<double>(Clock::now() - over).count();
    CHECK_FALSE(r.hang);
    records.push_back(r);
    if (r.hang) break;
    mark = *moved + kProgress;
  }
  REQUIRE(static_cast<int>(records.size()) == faults);

  const auto done = s.WaitTrainers(runs);
  int64_t steps = 0;
  for (const auto& trainer : done) {
    const Json& d = trainer.back();
    INFO(d.dump());
    CHECK(d["stopped"] == "input exhausted");
    CHECK(d["epoch"].get<double>() == Approx(epochs));
    CHECK(d["accuracy"].get<double>() > 0.8);
    steps += d["step"].get<int64_t>();
  }
  const int64_t global = *ReadGlobalStep(s.cluster);

  auto client = s.cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  auto listed = (*client)->ListCheckpoints(30s, /*verify=*/true);
  REQUIRE(listed.ok());
  int checkpoint_files = 0, unverified = 0;
  for (const TaskCheckpoints& task : *listed) {
    for (const CheckpointInfo& c : task.checkpoints) {
      ++checkpoint_files;
      if (!c.verified) {
        ++unverified;
        FAIL_CHECK(c.path << " does not verify: " << c.problem);
      }
    }
  }
  CHECK(checkpoint_files > 0);

  // Steps lost: the global step a fault took back (a ps kill), which the
  // trainers then ran again on the same input.
  int64_t lost = 0;
  double worst_recovery = 0, total_recovery = 0;
  Json faults_json = Json::array();
  for (const FaultRecord& r : records) {
    lost += std::max<int64_t>(0, r.global_before - r.global_after);
    worst_recovery = std::max(worst_recovery, r.recover_s);
    total_recovery += r.recover_s;
    faults_json.push_back({{"fault", FaultName(r.kind)}, {"target", r.target},
                           {"global_before", r.global_before}, {"global_after", r.global_after},
                           {"recover_s", r.recover_s}, {"hang", r.hang}});
  }
  // The global step ends near the plan: what a ps kill took back was run
  // again; a restarted worker task reads again what it read since the
  // newest checkpoint (its share of kCheckpointEvery steps), and steps in
  // flight at a save or restore may count once more or once less.
  INFO("global " << global << ", planned " << 2 * per_worker << ", steps run " << steps);
  CHECK(global >= 2 * per_worker - 4 * faults);
  CHECK(global <= 2 * per_worker + faults * (kCheckpointEvery + 4));

  if (const char* path = std::getenv("TFD_CHAOS_REPORT")) {
    Json report{{"faults", faults},
                {"link_faults", no_netns ? Json("skipped: " + *no_netns) : Json("in own netns")},
                {"hangs", std::count_if(records.begin(), records.end(),
                                        [](const FaultRecord& r) { return r.hang; })},
                {"global_steps_lost", lost},
                {"recover_s_mean", total_recovery / static_cast<double>(records.size())},
                {"recover_s_max", worst_recovery},
                {"planned_global_step", 2 * per_worker},
                {"final_global_step", global},
                {"steps_run", steps},
                {"accuracy", {done[0].back()["accuracy"], done[1].back()["accuracy"]}},
                {"recoveries", {done[0].back()["recoveries"], done[1].back()["recoveries"]}},
                {"checkpoints", checkpoint_files},
                {"checkpoints_unverified", unverified},
                {"each", faults_json}};
    std::ofstream(path) << report.dump(2) << "\n";
  }
}

}  // namespace
}  // namespace tfd::testing
