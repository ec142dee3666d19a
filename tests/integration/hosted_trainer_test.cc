// `tfctl train ... -- TFD_FLAGS`: the trainer hosts its worker task itself
// (daemon/task_host.h) beside a real tfd ps, as a TensorFlow program that
// starts its own server does. It trains to the very losses a trainer of a
// tfd worker reaches, serves other clients meanwhile, stops cleanly on a
// signal twice in a row (the address free again for the next run, the ps
// untouched), fails at once where its task's address is taken, and refuses
// command lines that cannot mean anything.
#include <catch2/catch.hpp>

#include <signal.h>

#include "tests/integration/training_fixture.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;
using testing::Json;
using testing::TrainingCluster;

// The last JSON record of a trainer that exited with `expected_status`.
Json Done(testing::ChildProcess& run, int expected_status = 0) {
  auto status = run.Wait(120s);
  INFO(testing::OneLine(run.Stderr()) << " | " << testing::OneLine(run.Stdout()));
  REQUIRE(status.ok());
  REQUIRE(*status == expected_status);
  std::istringstream lines(run.Stdout());
  std::string line, last;
  while (std::getline(lines, line)) {
    if (!line.empty()) last = line;
  }
  REQUIRE(!last.empty());
  Json done = Json::parse(last);
  REQUIRE(done["event"] == "done");
  return done;
}

TEST_CASE("a trainer hosting its worker trains to the losses of a tfd worker's trainer") {
  TrainingCluster s(1);
  REQUIRE(s.cluster.Start("ps", 0).ok());
  const std::string graph = s.Graph({.workers = 1, .epochs = 2});

  auto hosting = s.SpawnHostingTrainer(graph, 0);
  const Json hosted = Done(*hosting);
  INFO("hosted: " << hosted.dump());
  CHECK(hosted["task"] == "/job:worker/replica:0/task:0");
  CHECK(hosted["chief"] == true);
  CHECK(hosted["stopped"] == "input exhausted");
  CHECK(hosted["step"] == 48);  // 1200 examples in batches of 50, twice
  testing::CheckLearned(hosted);
  CHECK(s.GlobalStep() == 48);

  // The same run from scratch through a tfd worker.
  s.cluster.Kill("ps", 0);
  REQUIRE(s.cluster.Start("ps", 0).ok());
  REQUIRE(s.cluster.Start("worker", 0).ok());
  const Json remote = s.TrainAll(graph, 1)[0];
  INFO("tfd worker: " << remote.dump());
  CHECK(remote["step"] == 48);
  CHECK(hosted["first_loss"].get<double>() == remote["first_loss"].get<double>());
  CHECK(hosted["loss"].get<double>() == remote["loss"].get<double>());
  CHECK(hosted["accuracy"].get<double>() == remote["accuracy"].get<double>());
}

TEST_CASE("a trainer hosting its worker serves other clients, and stops cleanly on SIGTERM, "
          "then on SIGINT") {
  TrainingCluster s(1);
  REQUIRE(s.cluster.Start("ps", 0).ok());
  // Far more epochs than the test lets run.
  const std::string graph = s.Graph({.workers = 1, .epochs = 1000});
  int64_t previous = 0;
  for (const int signal : {SIGTERM, SIGINT}) {
    INFO((signal == SIGTERM ? "SIGTERM" : "SIGINT"));
    // The second run binds the address the first one hosted its task on.
    auto run = s.SpawnHostingTrainer(graph, 0);
    s.WaitGlobalStep(previous + 50);
    // Meanwhile the hosted task answers at its address like a tfd task.
    auto client = s.cluster.Connect("worker", 0);
    REQUIRE(client.ok());
    auto status = (*client)->GetStatus(10s);
    INFO(status.status().ToString());
    REQUIRE(status.ok());
    CHECK(status->task == "/job:worker/replica:0/task:0");
    CHECK(status->pid == run->pid());
    client->reset();

    run->Signal(signal);
    const Json done = Done(*run, 128 + signal);
    INFO(done.dump());
    CHECK(done["stopped"] == (signal == SIGTERM ? "stopped by SIGTERM" : "stopped by SIGINT"));
    const int64_t stopped_at = done["global_step"].get<int64_t>();
    CHECK(stopped_at >= previous + 50);
    // The ps is untouched and holds the step the trainer stopped at.
    CHECK(s.GlobalStep() == stopped_at);
    previous = stopped_at;
  }
}

TEST_CASE("a trainer whose task's address is taken fails at once, twice, and trains once it is "
          "free") {
  TrainingCluster s(1);
  REQUIRE(s.cluster.Start("ps", 0).ok());
  REQUIRE(s.cluster.Start("worker", 0).ok());  // a tfd holds worker:0's address
  const std::string graph = s.Graph({.workers = 1, .epochs = 1});
  for (int attempt = 0; attempt < 2; ++attempt) {
    INFO("attempt " << attempt);
    auto run = s.SpawnHostingTrainer(graph, 0);
    auto status = run->Wait(60s);
    INFO(testing::OneLine(run->Stderr()));
    REQUIRE(status.ok());
    CHECK(*status == 1);
    CHECK(run->Stderr().find("UNAVAILABLE: cannot listen on " + s.cluster.Address("worker", 0)) !=
          std::string::npos);
  }
  REQUIRE(s.cluster.Stop("worker", 0, 10s).ok());
  auto run = s.SpawnHostingTrainer(graph, 0);
  const Json done = Done(*run);
  CHECK(done["stopped"] == "input exhausted");
  CHECK(done["step"] == 24);
}

TEST_CASE("tfctl train refuses a hosted task it cannot mean, with exit status 2") {
  TrainingCluster s(1);
  const std::string graph = s.Graph({.workers = 1, .epochs = 1});
  const std::string spec = s.cluster.spec().ToJson();
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"--target", s.cluster.Address("worker", 0), "--", "--cluster", spec, "--job", "worker",
        "--task", "0"},
       "give one or the other"},
      {{"--", "--job", "worker", "--task", "0"}, "the task's flags after --"},
      {{"--", "--cluster", spec, "--job", "worker", "--task", "7"}, "the task's flags after --"},
      {{"--", "--cluster", spec, "--job", "worker", "--task", "0", "--bogus"},
       "the task's flags after --"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> argv{testing::TfctlBinary(), "train", graph};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    auto run = testing::RunProcess(argv, 30s);
    REQUIRE(run.ok());
    INFO(testing::OneLine(run->err));
    CHECK(run->exit_status == 2);
    CHECK(run->err.find(c.says) != std::string::npos);
  }
}

}  // namespace
}  // namespace tfd
