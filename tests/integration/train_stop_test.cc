// `tfctl train` while it waits for the cluster (docs/cli.md, "tfctl
// train"): a signal during a wait for the cluster, the init barrier or a
// recovery ends the run as a stop between steps does (the result printed
// with `stopped`, tfctl dying of the signal), not after --init-timeout; a
// trainer whose own worker went for good ends after one recovery's
// --init-timeout, as one whose ps went does, however many recoveries are
// left; a run with no step left says so with null losses.
#include <signal.h>

#include <fstream>

#include <catch2/catch.hpp>

#include "tests/integration/training_fixture.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;
using testing::ChildProcess;
using testing::Json;
using testing::TrainingCluster;

// `tfctl train` on worker:`worker` with `flags`, in the background.
std::unique_ptr<ChildProcess> SpawnTrainer(TrainingCluster& s, const std::string& graph,
                                           std::vector<std::string> flags, int worker = 0) {
  std::vector<std::string> argv{testing::TfctlBinary(), "train", graph, "--output", "json"};
  for (const std::string& flag : {std::string("--target"), s.cluster.Address("worker", worker),
                                  std::string("--step-timeout"), std::string("30")}) {
    argv.push_back(flag);
  }
  argv.insert(argv.end(), flags.begin(), flags.end());
  auto child = ChildProcess::Spawn(argv);
  REQUIRE(child.ok());
  return std::move(child).value();
}

// Whether process `pid` catches `signal` (its SigCgt mask in /proc).
bool Catches(pid_t pid, int signal) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("SigCgt:", 0) != 0) continue;
    const uint64_t mask = std::stoull(line.substr(7), nullptr, 16);
    return (mask >> (signal - 1)) & 1;
  }
  return false;
}

// Waits (60 s at most) until the trainer has installed its handlers: a
// signal from then on is its stop request, not the default death.
void WaitCatching(const ChildProcess& run) {
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (!(Catches(run.pid(), SIGTERM) && Catches(run.pid(), SIGINT)) && run.running() &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  REQUIRE(Catches(run.pid(), SIGTERM));
}

// Every JSON record of a trainer that exited with `expected_status`.
std::vector<Json> Records(ChildProcess& run, int expected_status) {
  auto status = run.Wait(120s);
  INFO(testing::OneLine(run.Stderr()) << " | " << testing::OneLine(run.Stdout()));
  REQUIRE(status.ok());
  REQUIRE(*status == expected_status);
  std::vector<Json> records;
  std::istringstream lines(run.Stdout());
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) records.push_back(Json::parse(line));
  }
  REQUIRE(!records.empty());
  return records;
}

int Count(const std::vector<Json>& records, const std::string& event) {
  return static_cast<int>(std::count_if(records.begin(), records.end(), [&](const Json& r) {
    return r.value("event", "") == event;
  }));
}

// The signal's stop: the result printed, nothing saved, death by it. The
// trainer's records.
std::vector<Json> CheckStopped(ChildProcess& run, int signal) {
  std::vector<Json> records = Records(run, 128 + signal);
  const Json& done = records.back();
  INFO(done.dump() << " | " << testing::OneLine(run.Stderr()));
  REQUIRE(done["event"] == "done");
  CHECK(done["stopped"] == (signal == SIGTERM ? "stopped by SIGTERM" : "stopped by SIGINT"));
  CHECK(done["checkpoints"] == 0);
  CHECK(done["checkpoint_failures"] == 0);
  CHECK(run.Stderr().find("error:") == std::string::npos);
  return records;
}

TEST_CASE("SIGTERM while the chief waits for a ps that is down ends the run as a stop") {
  TrainingCluster s(1);
  REQUIRE(s.cluster.Start("worker", 0).ok());  // the ps never starts
  const std::string graph = s.Graph({.workers = 1, .epochs = 1});
  // Far longer than the test waits for the trainer to exit.
  auto run = SpawnTrainer(s, graph, {"--init-timeout", "600"});
  WaitCatching(*run);
  run->Signal(SIGTERM);
  CheckStopped(*run, SIGTERM);
}

TEST_CASE("SIGINT while a worker waits at the init barrier ends the run as a stop") {
  TrainingCluster s(1);
  REQUIRE(s.cluster.StartAll().ok());
  const std::string graph = s.Graph({.workers = 1, .epochs = 1});
  // No chief: the variables are never initialized.
  auto run = SpawnTrainer(s, graph, {"--init-timeout", "600", "--chief", "no"});
  WaitCatching(*run);
  run->Signal(SIGINT);
  CheckStopped(*run, SIGINT);
}

TEST_CASE("SIGINT while the trainer recovers from a ps that is gone ends the run as a stop") {
  TrainingCluster s(1);
  REQUIRE(s.cluster.StartAll().ok());
  const std::string graph = s.Graph({.workers = 1, .epochs = 1000});
  auto run = SpawnTrainer(s, graph, {"--init-timeout", "600"});
  s.WaitGlobalStep(20);
  s.cluster.Kill("ps", 0);
  TrainingCluster::WaitTrainerRecord(*run, "recovering");
  run->Signal(SIGINT);
  const std::vector<Json> records = CheckStopped(*run, SIGINT);
  CHECK(records.back()["recoveries"] == 1);
  // The steps made before the ps went are still counted. The ps may have
  // applied step 20 and died before its reply reached the trainer: that
  // step is not one the trainer saw end, so 19 is the least it can say.
  CHECK(records.back()["step"].get<int64_t>() >= 19);
}

// The rule of docs/cli.md: a wait for the cluster that passes
// --init-timeout ends the run; connecting again to the trainer's own task
// is such a wait, not a recovery to try --max-recoveries times.
TEST_CASE(
    "a task killed for good, the trainer's own worker or the ps: one recovery, then "
    "DEADLINE_EXCEEDED") {
  for (const std::string job : {"worker", "ps"}) {
    INFO(job << " killed");
    TrainingCluster s(1);
    REQUIRE(s.cluster.StartAll().ok());
    const std::string graph = s.Graph({.workers = 1, .epochs = 1000});
    auto run = SpawnTrainer(s, graph, {"--init-timeout", "2", "--max-recoveries", "10"});
    s.WaitGlobalStep(20);
    s.cluster.Kill(job, 0);
    const std::vector<Json> records = Records(*run, 1);
    INFO(testing::OneLine(run->Stderr()) << " | " << testing::OneLine(run->Stdout()));
    CHECK(Count(records, "recovering") == 1);
    CHECK(records.back().contains("error"));
    CHECK(records.back()["error"]["code"] == "DEADLINE_EXCEEDED");
    CHECK(run->Stderr().find("error: DEADLINE_EXCEEDED: ") != std::string::npos);
    CHECK(run->Stderr().find("within 2 s") != std::string::npos);
    CHECK(run->Stderr().find("--max-recoveries") == std::string::npos);
  }
}

// docs/cli.md, "Output": `loss` and `first_loss` are null for a graph
// without a loss, and for a run that ran no step (nothing measured it).
TEST_CASE("a run whose model is at --steps already runs no step and reports null losses") {
  TrainingCluster s(1);
  REQUIRE(s.cluster.StartAll().ok());
  const std::string graph = s.Graph({.workers = 1, .epochs = 1000});
  const Json first = Records(*SpawnTrainer(s, graph, {"--steps", "5"}), 0).back();
  INFO(first.dump());
  CHECK(first["step"] == 5);
  CHECK(first["loss"].is_number());
  CHECK(first["first_loss"].is_number());
  const Json again = Records(*SpawnTrainer(s, graph, {"--steps", "5"}), 0).back();
  INFO(again.dump());
  CHECK(again["stopped"] == "reached step 5");
  CHECK(again["step"] == 0);
  CHECK(again["global_step"] == 5);
  CHECK(again["loss"].is_null());
  CHECK(again["first_loss"].is_null());
}

}  // namespace
}  // namespace tfd
