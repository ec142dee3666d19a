// Distributed MNIST-style training end to end: real tfd tasks (1 ps and 2 or
// 3 workers), the examples/mnist graph, and `tfctl train` on every worker as
// separate processes — asynchronous, synchronous, with a backup worker, and
// resumed from a checkpoint after the ps is killed. The data is a small
// generated IDX set whose classes are easy to tell apart, so a few dozen
// steps show the loss falling.
#include <catch2/catch.hpp>

#include <signal.h>

#include <cstdlib>
#include <filesystem>

#include "tests/integration/training_fixture.h"

namespace tfd::testing {
namespace {

TEST_CASE("asynchronous replicas: each worker trains its shard to the end, the loss falls") {
  TrainingCluster s(2);
  REQUIRE(s.cluster.StartAll().ok());
  const std::string graph = s.Graph({.workers = 2, .epochs = 2});
  const std::string logdir = s.work.path() + "/logs/run1";
  const auto done = s.TrainAll(graph, 2, {"--logdir", logdir, "--summary-steps", "5"});
  // Each worker's shard is 600 examples: 12 batches of 50, twice.
  for (const Json& j : done) {
    CHECK(j["stopped"] == "input exhausted");
    CHECK(j["step"] == 24);
    CHECK(j["epoch"].get<double>() == Approx(2.0));
  }
  CheckAllLearned(done);
  CHECK(done[0]["chief"] == true);
  CHECK(done[0]["initialized"] == true);
  CHECK(done[1]["chief"] == false);
  // No task has a --checkpoint-dir: the default policy saves nothing and
  // does not fail the run.
  CHECK(done[0]["checkpoints"] == 0);
  // Every step of both workers moved global_step once.
  CHECK(s.GlobalStep() == 48);

  // The chief's event file, read back as TensorBoard reads it: a summary
  // every 5 of its steps and after its last (24), each with the graph's
  // summaries and the step rate, at increasing global steps; the last
  // loss is the one the run reported.
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(logdir)) files.push_back(e.path());
  REQUIRE(files.size() == 1);
  const char* reader = std::getenv("READ_EVENTS");
  REQUIRE(reader != nullptr);
  auto read = testing::RunProcess({"/usr/bin/python3", reader, files[0].string()}, 60s);
  REQUIRE(read.ok());
  INFO("read_events.py: " << OneLine(read->out + read->err));
  REQUIRE(read->exit_status == 0);
  const Json events = Json::parse(read->out);
  CHECK(events["file_version"] == "brain.Event:2");
  REQUIRE(events["events"].size() == 5);
  int64_t previous = -1;
  for (const Json& e : events["events"]) {
    INFO(e.dump());
    CHECK(e["step"].get<int64_t>() > previous);
    previous = e["step"].get<int64_t>();
    CHECK(e["scalars"].contains("loss"));
    CHECK(e["scalars"].contains("epoch"));
    CHECK(e["scalars"]["global_step/sec"].get<double>() > 0);
  }
  CHECK(events["events"].back()["scalars"]["loss"].get<double>() ==
        Approx(done[0]["loss"].get<double>()).epsilon(1e-6));
  CHECK(events["events"].back()["scalars"]["epoch"].get<double>() == Approx(2.0));
}

TEST_CASE("the large model: 5.8 M parameters spread over 2 ps tasks, trained by a worker") {
  TrainingCluster s(1, {}, /*ps_tasks=*/2);
  REQUIRE(s.cluster.StartAll().ok());
  const std::string graph = s.Graph({.model = examples::MnistModel::kLarge,
                                     .ps_tasks = 2,
                                     .epochs = 1,
                                     .learning_rate = 0.05});
  const auto done = s.TrainAll(graph, 1);
  INFO(done[0].dump());
  CHECK(done[0]["stopped"] == "input exhausted");
  CHECK(done[0]["step"] == kTrain / kBatch);
  CheckLearned(done[0]);
  // Every parameter lives on a ps task, each task holds some, and together
  // they are the 784-2048-2048-10 network's.
  int64_t parameters = 0;
  for (int task = 0; task < 2; ++task) {
    auto ps = s.cluster.Connect("ps", task);
    REQUIRE(ps.ok());
    auto vars = (*ps)->ListVariables(5s);
    REQUIRE(vars.ok());
    int64_t here = 0;
    for (const auto& v : *vars) {
      if (v.name == "global_step") continue;
      here += v.shape.num_elements();
    }
    INFO("ps:" << task);
    CHECK(here > 0);
    parameters += here;
  }
  CHECK(parameters == 784 * 2048 + 2048 + 2048 * 2048 + 2048 + 2048 * 10 + 10);
}

// The Deep MNIST convnet through tfctl train on 1 ps + 2 workers: its
// 3,274,634 parameters on the ps, the loss falling on both workers, and the
// test set classified in chunks (64, 64, 64, 8) counted into one accuracy.
TEST_CASE("the deep model: the convnet trains on 1 ps + 2 workers, evaluated in chunks") {
  TrainingCluster s(2);
  REQUIRE(s.cluster.StartAll().ok());
  const std::string graph = s.Graph({.model = examples::MnistModel::kDeep,
                                     .workers = 2,
                                     .epochs = 2,
                                     .learning_rate = 0.001,
                                     .eval_batch = 64});
  const auto done = s.TrainAll(graph, 2);
  for (const Json& j : done) {
    CHECK(j["stopped"] == "input exhausted");
    CHECK(j["step"] == 2 * kTrain / 2 / kBatch);
  }
  CheckAllLearned(done);
  auto ps = s.cluster.Connect("ps", 0);
  REQUIRE(ps.ok());
  auto vars = (*ps)->ListVariables(5s);
  REQUIRE(vars.ok());
  int64_t parameters = 0;
  for (const auto& v : *vars) {
    // global_step and Adam's slots and powers are not the model's.
    if (v.name.find("conv") == 0 || v.name.find("fc") == 0) {
      if (v.name.find("Adam") == std::string::npos) parameters += v.shape.num_elements();
    }
  }
  CHECK(parameters == 5 * 5 * 32 + 32 + 5 * 5 * 32 * 64 + 64 + 7 * 7 * 64 * 1024 + 1024 +
                          1024 * 10 + 10);
  // Each test example counted once: the accuracy is a multiple of 1/200,
  // and no more than 1.
  for (const Json& j : done) {
    CHECK(j["accuracy"].get<double>() <= 1.0);
    const double correct = j["accuracy"].get<double>() * kTest;
    CHECK(std::abs(correct - std::round(correct)) < 1e-3);
  }
}

TEST_CASE("synchronous replicas: every update averages both workers' gradients") {
  TrainingCluster s(2);
  REQUIRE(s.cluster.StartAll().ok());
  const std::string graph = s.Graph({.workers = 2, .sync = true, .epochs = 2});
  const auto done = s.TrainAll(graph, 2);
  // max_steps = 2 epochs x 1200 examples / (50 x 2 replicas) = 24 updates.
  for (const Json& j : done) {
    CHECK(j["stopped"] == "reached step 24");
    CHECK(j["global_step"] == 24);
    // In lock step: one step per update on each worker, never more.
    CHECK(j["step"] == 24);
  }
  CheckAllLearned(done);
  CHECK(s.GlobalStep() == 24);
}

TEST_CASE("synchronous replicas with a backup worker: 2 of 3 gradients per update") {
  TrainingCluster s(3);
  REQUIRE(s.cluster.StartAll().ok());
  const std::string graph =
      s.Graph({.workers = 3, .sync = true, .replicas_to_aggregate = 2, .epochs = 2});
  const auto done = s.TrainAll(graph, 3);
  for (const Json& j : done) CHECK(j["global_step"] == 24);
  CheckAllLearned(done);
  // The chief runs one update per step; the other two share the tokens of
  // each round (2 per update), whichever is faster taking more.
  CHECK(done[0]["step"] == 24);
  CHECK(done[1]["step"].get<int64_t>() + done[2]["step"].get<int64_t>() >= 24);
  CHECK(s.GlobalStep() == 24);
}

// kill -9 of the ps during synchronous training: the replicas parked on
// the dead ps's token queue and the chief's aggregation fail; every trainer
// recovers, the chief initializes the accumulators again at the restored
// step and restores the checkpoint on every task, and training ends at the
// planned number of updates, the updates taken back run again.
TEST_CASE("synchronous replicas: the ps killed mid-run, every trainer recovers and finishes") {
  TempDir checkpoints;
  TrainingCluster s(2, {"--checkpoint-dir=" + checkpoints.path()});
  REQUIRE(s.cluster.StartAll().ok());
  // max_steps = 20 epochs x 1200 / (50 x 2) = 240 updates.
  const std::string graph = s.Graph({.workers = 2, .sync = true, .epochs = 20});
  auto runs = s.SpawnTrainers(graph, 2, {"--checkpoint-every", "20"});
  const int64_t lost = s.WaitGlobalStep(50);
  s.cluster.Kill("ps", 0);
  std::this_thread::sleep_for(300ms);
  REQUIRE(s.cluster.Start("ps", 0).ok());
  CHECK(s.GlobalStep() < lost);

  const auto records = s.WaitTrainers(runs);
  for (size_t i = 0; i < records.size(); ++i) {
    const Json& done = records[i].back();
    INFO("worker " << i << ": " << done.dump());
    CHECK(done["stopped"] == "reached step 240");
    CHECK(done["global_step"] == 240);
    CHECK(done["recoveries"].get<int>() >= 1);
    // One step per update on each worker, and the updates the restore took
    // back run again (a step that failed with the ps may count or not).
    CHECK(done["step"].get<int64_t>() >= 240);
    CheckLearned(done);
  }
  const std::vector<int64_t> restored = Restores(records);
  REQUIRE(restored.size() >= 1);
  CHECK(restored[0] < lost);
  CHECK(s.GlobalStep() == 240);
}

// kill -9 of a replica's worker task during synchronous training, twice:
// its trainer connects again and goes on; the chief's rounds wait for its
// gradients meanwhile (or its step's deadline passes and it recovers too),
// and training ends at the planned number of updates.
TEST_CASE("synchronous replicas: a replica's task killed twice, training finishes") {
  TempDir checkpoints;
  TrainingCluster s(2, {"--checkpoint-dir=" + checkpoints.path()});
  REQUIRE(s.cluster.StartAll().ok());
  const std::string graph = s.Graph({.workers = 2, .sync = true, .epochs = 20});
  auto runs = s.SpawnTrainers(graph, 2, {"--checkpoint-every", "20"}, {}, /*step_timeout_s=*/5);
  int64_t at = 40;
  for (int kill = 0; kill < 2; ++kill) {
    at = s.WaitGlobalStep(at) + 40;
    s.cluster.Kill("worker", 1);
    std::this_thread::sleep_for(300ms);
    REQUIRE(s.cluster.Start("worker", 1).ok());
  }
  const auto records = s.WaitTrainers(runs);
  for (size_t i = 0; i < records.size(); ++i) {
    const Json& done = records[i].back();
    INFO("worker " << i << ": " << done.dump());
    CHECK(done["stopped"] == "reached step 240");
    CHECK(done["global_step"] == 240);
    CheckLearned(done);
  }
  CHECK(records[1].back()["recoveries"].get<int>() >= 2);
  CHECK(s.GlobalStep() == 240);
}

TEST_CASE("training resumes from the checkpoint after the ps is killed") {
  TempDir checkpoints;
  TrainingCluster s(2, {"--checkpoint-dir=" + checkpoints.path()});
  REQUIRE(s.cluster.StartAll().ok());
  const std::string graph = s.Graph({.workers = 2, .epochs = 1});
  const auto first = s.TrainAll(graph, 2, {"--checkpoint-every", "5"});
  CHECK(first[0]["checkpoints"].get<int64_t>() >= 2);
  // Every task writes into its own subdirectory of the shared directory.
  CHECK(std::filesystem::exists(checkpoints.path() + "/ps-0"));
  CHECK(std::filesystem::exists(checkpoints.path() + "/worker-0"));
  const int64_t trained = s.GlobalStep();
  CHECK(trained == 24);

  // kill -9 and restart the ps: it restores the newest checkpoint, which the
  // chief saved at the end of its own steps.
  s.cluster.Kill("ps", 0);
  REQUIRE(s.cluster.Start("ps", 0).ok());
  const int64_t restored = s.GlobalStep();
  CHECK(restored >= 12);
  CHECK(restored <= trained);

  // The chief finds every variable initialized and does not initialize them
  // again. The model stands at a saved step, so the trainers restore that
  // checkpoint on every task: each worker's input goes back to where it
  // stood then (the first run had read it to the end), and only the steps
  // the ps lost are trained again — the global step ends at the planned 24,
  // give or take the steps another worker had in flight during the save
  // (the tasks' snapshots are not one instant).
  const auto second = s.TrainAll(graph, 2);
  INFO("restored " << restored << "; " << second[0].dump() << " | " << second[1].dump());
  CHECK(second[0]["initialized"] == false);
  // Whichever starts first restores; one that starts at the same step
  // restores too (taking back the other's steps with their input).
  CHECK((second[0]["restored_checkpoints"] == Json::array({restored}) ||
         second[1]["restored_checkpoints"] == Json::array({restored})));
  const int64_t again = second[0]["step"].get<int64_t>() + second[1]["step"].get<int64_t>();
  CHECK(std::abs(again - (trained - restored)) <= 2);
  const int64_t finished = s.GlobalStep();
  CHECK(std::abs(finished - trained) <= 2);
  CHECK(second[0]["accuracy"].get<double>() > 0.8);

  // --steps that the global step has reached already: no step is run, and
  // nothing is saved again.
  const auto third = s.TrainAll(graph, 1, {"--steps", std::to_string(finished)});
  CHECK(third[0]["step"] == 0);
  CHECK(third[0]["global_step"] == finished);
  CHECK(third[0]["stopped"] == "reached step " + std::to_string(finished));
  CHECK(third[0]["checkpoints"] == 0);
  CHECK(s.GlobalStep() == finished);
}

// kill -9 of the ps mid-training; again right after its restart, while the
// trainers are recovering (they wait for the cluster: a connection to the
// dead incarnation must not make that wait fail); and again mid-training.
// Each trainer waits for the cluster, opens a new session and goes on; the
// chief, finding the global step gone back, restores the newest checkpoint
// on every task, so every worker's input goes back with the model, and
// training ends at the planned global step.
TEST_CASE("the ps killed three times, once mid-recovery: the trainers recover and finish") {
  TempDir checkpoints;
  TrainingCluster s(2, {"--checkpoint-dir=" + checkpoints.path()});
  REQUIRE(s.cluster.StartAll().ok());
  // 40 epochs of each worker's 600-example shard: 480 steps each, long
  // enough (a few seconds here) for every kill to land mid-run.
  constexpr int kEpochs = 40, kSteps = kEpochs * kTrain / 2 / kBatch;
  const std::string graph = s.Graph({.workers = 2, .epochs = kEpochs});
  constexpr int kCheckpointEvery = 50;
  auto runs = s.SpawnTrainers(graph, 2, {"--checkpoint-every", std::to_string(kCheckpointEvery)});

  s.WaitGlobalStep(60);
  // Both trainers step before the first kill, so that it fails a step of
  // each: on a loaded machine one trainer can start after the other has
  // made 60 steps.
  s.WaitTaskPushing("worker", 0);
  s.WaitTaskPushing("worker", 1);
  s.cluster.Kill("ps", 0);
  REQUIRE(s.cluster.Start("ps", 0).ok());
  // The moment it listens the trainers are waiting for the cluster or
  // opening sessions: kill it again there.
  s.cluster.Kill("ps", 0);
  std::this_thread::sleep_for(500ms);
  REQUIRE(s.cluster.Start("ps", 0).ok());
  const int64_t restored = s.GlobalStep();
  s.WaitGlobalStep(restored + 20);
  s.cluster.Kill("ps", 0);
  REQUIRE(s.cluster.Start("ps", 0).ok());

  const auto records = s.WaitTrainers(runs);
  int64_t steps = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    const Json& done = records[i].back();
    INFO("worker " << i << ": " << done.dump());
    CHECK(done["stopped"] == "input exhausted");
    // The first kill fails a step of each (the ps is down a while); the
    // second may land in the first recovery's wait, and the third, when the
    // ps is back before this worker's next step, is absorbed by its master
    // registering the step's graph on the new ps.
    CHECK(done["recoveries"].get<int>() >= 1);
    CHECK(done["recoveries"].get<int>() <= 3);
    int recovering = 0;
    for (const Json& r : records[i]) {
      if (r["event"] == "recovering") {
        ++recovering;
        const std::string error = r["error"];
        CHECK((error.find("UNAVAILABLE") != std::string::npos ||
               error.find("ABORTED") != std::string::npos));
      }
    }
    CHECK(recovering == done["recoveries"].get<int>());
    // What the lost steps had read is read again, nothing more.
    CHECK(done["step"].get<int64_t>() >= kSteps - 2 * done["recoveries"].get<int64_t>());
    CHECK(done["step"].get<int64_t>() <= kSteps + 3 * (kCheckpointEvery + 4));
    CHECK(done["epoch"].get<double>() == Approx(kEpochs));
    steps += done["step"].get<int64_t>();
    CheckLearned(done);
  }
  // The steps lost with the ps were trained again on the same input: the
  // global step ends at the planned 2 x 480, give or take the steps in
  // flight while a checkpoint was saved or restored.
  const int64_t global = s.GlobalStep();
  INFO("global step " << global << ", steps run " << steps);
  CHECK(global <= steps);
  CHECK(std::abs(global - 2 * kSteps) <= 3 * 4);
  CHECK(Restores(records).size() >= 1);

  // Every checkpoint the run left verifies.
  auto client = s.cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  auto listed = (*client)->ListCheckpoints(30s, /*verify=*/true);
  INFO(listed.status().ToString());
  REQUIRE(listed.ok());
}

// kill -9 of the ps before the first periodic save: the chief saved the
// model it initialized before its first step, so the restarted ps restores
// that, the chief restores it on every task, and both workers' input goes
// back to its start with the model: the global step ends at the plan, not
// short by the steps the ps lost.
TEST_CASE("the ps killed before the first periodic save: training starts over from the first") {
  TempDir checkpoints;
  TrainingCluster s(2, {"--checkpoint-dir=" + checkpoints.path()});
  REQUIRE(s.cluster.StartAll().ok());
  constexpr int kEpochs = 20, kSteps = kEpochs * kTrain / 2 / kBatch;
  const std::string graph = s.Graph({.workers = 2, .epochs = kEpochs});
  auto runs = s.SpawnTrainers(graph, 2, {"--checkpoint-every", "100000"});
  const int64_t lost = s.WaitGlobalStep(20);
  s.cluster.Kill("ps", 0);
  REQUIRE(s.cluster.Start("ps", 0).ok());
  // The only checkpoint yet: the chief's save before its first step.
  const int64_t back_at = s.NewestPsCheckpoint();
  CHECK(back_at < lost);

  const auto records = s.WaitTrainers(runs);
  const Json& chief = records[0].back();
  INFO(chief.dump() << " | " << records[1].back().dump());
  // The save before the first step, and the one at the end.
  CHECK(chief["checkpoints"] == 2);
  // Restored once, by whichever trainer saw the restart first (both, when
  // they looked at once: each restore takes back the other's steps with
  // their input).
  const std::vector<int64_t> restored = Restores(records);
  CHECK(restored.size() >= 1);
  CHECK(restored.size() <= 2);
  for (int64_t step : restored) CHECK(step == back_at);
  int64_t steps = 0;
  for (const auto& r : records) {
    CHECK(r.back()["stopped"] == "input exhausted");
    CHECK(r.back()["epoch"].get<double>() == Approx(kEpochs));
    CheckLearned(r.back());
    steps += r.back()["step"].get<int64_t>();
  }
  // Everything the lost steps read was read again: the workers ran their
  // plan and the lost steps over again, and the global step ends at the
  // plan, give or take the steps in flight at the kill and the restore.
  CHECK(steps >= 2 * kSteps + (lost - back_at) - 4);
  CHECK(std::abs(s.GlobalStep() - 2 * kSteps) <= 4);
}

// kill -9 of the ps while the chief's trainer is stopped (SIGSTOP: a
// chief that lags, as on a loaded host). The restarted ps says its
// variables went back alone: the other worker, recovering first, restores
// that checkpoint on every task before it steps on, so the chief's input
// and its own go back with the ps, and training ends at the plan. Before,
// only the chief restored, on seeing the global step go back: this one
// found it ahead (the other worker had moved it) and restored nothing.
TEST_CASE("the ps restarted while the chief lagged: the cluster is still restored") {
  TempDir checkpoints;
  TrainingCluster s(2, {"--checkpoint-dir=" + checkpoints.path()});
  REQUIRE(s.cluster.StartAll().ok());
  constexpr int kEpochs = 20, kSteps = kEpochs * kTrain / 2 / kBatch;
  const std::string graph = s.Graph({.workers = 2, .epochs = kEpochs});
  auto runs = s.SpawnTrainers(graph, 2, {"--checkpoint-every", "30"});
  s.WaitGlobalStep(40);
  runs[0]->Signal(SIGSTOP);
  const int64_t chief_saw = s.GlobalStep();  // at most
  s.cluster.Kill("ps", 0);
  REQUIRE(s.cluster.Start("ps", 0).ok());
  // Only the chief saves, and it is stopped.
  const int64_t back_at = s.NewestPsCheckpoint();
  CHECK(back_at <= chief_saw);
  // The other worker recovers alone and runs past what the chief saw.
  s.WaitGlobalStep(chief_saw + 10);
  runs[0]->Signal(SIGCONT);

  const auto records = s.WaitTrainers(runs);
  INFO(records[0].back().dump() << " | " << records[1].back().dump() << " | back at "
                                << back_at << ", the chief saw at most " << chief_saw);
  const std::vector<int64_t> restored = Restores(records);
  REQUIRE(restored.size() >= 1);
  for (int64_t step : restored) CHECK(step == back_at);
  for (const auto& r : records) {
    CHECK(r.back()["stopped"] == "input exhausted");
    CHECK(r.back()["epoch"].get<double>() == Approx(kEpochs));
    // What the kill took back is read again, little more: no trainer
    // stepped ahead on the restored ps before the restore.
    CHECK(r.back()["step"].get<int64_t>() <= kSteps + (chief_saw - back_at) + 4);
  }
  CHECK(std::abs(s.GlobalStep() - 2 * kSteps) <= 4);
}

// kill -9 of the task a trainer talks to, twice: the trainer connects
// again once the task is back (its supervisor restarts it), waits for the
// cluster and goes on. The restarted worker task restores its input
// position from its newest checkpoint: it reads again only what it read
// since that checkpoint, never from epoch 0.
TEST_CASE("a worker task killed twice under its trainer: the trainer connects again and finishes") {
  TempDir checkpoints;
  TrainingCluster s(2, {"--checkpoint-dir=" + checkpoints.path()});
  REQUIRE(s.cluster.StartAll().ok());
  constexpr int kEpochs = 40, kSteps = kEpochs * kTrain / 2 / kBatch;
  const std::string graph = s.Graph({.workers = 2, .epochs = kEpochs});
  auto runs = s.SpawnTrainers(graph, 2, {"--checkpoint-every", "50"});
  int64_t at = 60;
  for (int kill = 0; kill < 2; ++kill) {
    at = s.WaitGlobalStep(at) + 60;
    s.cluster.Kill("worker", 1);
    std::this_thread::sleep_for(300ms);
    REQUIRE(s.cluster.Start("worker", 1).ok());
    // The next kill lands after the trainer has recovered, not inside the
    // same recovery (worker 0 alone can take the 60 steps while it waits).
    s.WaitTaskPushing("worker", 1);
  }
  const auto records = s.WaitTrainers(runs);
  const Json& restarted = records[1].back();
  INFO(restarted.dump());
  CHECK(restarted["stopped"] == "input exhausted");
  CHECK(restarted["task"] == "/job:worker/replica:0/task:1");
  CHECK(restarted["recoveries"].get<int>() >= 2);
  // Each restart took its input back to the newest checkpoint (every 50
  // global steps, about half of them this worker's): a few steps more than
  // the planned epochs, far from another pass over them.
  CHECK(restarted["step"].get<int64_t>() >= kSteps);
  CHECK(restarted["step"].get<int64_t>() <= kSteps + 2 * (50 + 4));
  CHECK(restarted["epoch"].get<double>() == Approx(kEpochs));
  CheckLearned(restarted);
  // The chief's task stayed up: it went on through worker:1's absence.
  CHECK(records[0].back()["stopped"] == "input exhausted");
}

// A scheduler's SIGTERM (Slurm at the time limit, systemd, Kubernetes)
// and an operator's Ctrl-C: the chief ends after the running step, saves a
// checkpoint at that step, prints its result and dies of the signal, so a
// calling script stops too; the next run goes on from that step.
TEST_CASE("SIGTERM, then SIGINT on the next run: the chief saves where it stopped") {
  TempDir checkpoints;
  TrainingCluster s(1, {"--checkpoint-dir=" + checkpoints.path()});
  REQUIRE(s.cluster.StartAll().ok());
  // Far more epochs than the test lets run.
  const std::string graph = s.Graph({.workers = 1, .epochs = 1000});
  int64_t previous = 0;
  for (const int signal : {SIGTERM, SIGINT}) {
    INFO((signal == SIGTERM ? "SIGTERM" : "SIGINT"));
    auto runs = s.SpawnTrainers(graph, 1, {});
    s.WaitGlobalStep(previous + 50);
    runs[0]->Signal(signal);
    const auto records = s.WaitTrainers(runs, 128 + signal);
    const Json& done = records[0].back();
    INFO(done.dump());
    CHECK(done["stopped"] == (signal == SIGTERM ? "stopped by SIGTERM" : "stopped by SIGINT"));
    // The default policy (every 600 s) saved nothing periodic: the first
    // run saved the state it initialized and, on the way out, the step it
    // stopped at; the second, starting from restored variables, only that.
    CHECK(done["checkpoints"] == (previous == 0 ? 2 : 1));
    const int64_t stopped_at = done["global_step"].get<int64_t>();
    CHECK(stopped_at >= previous + 50);
    CHECK(s.GlobalStep() == stopped_at);
    auto client = s.cluster.Connect("worker", 0);
    REQUIRE(client.ok());
    auto listed = (*client)->ListCheckpoints(30s, /*verify=*/true);
    REQUIRE(listed.ok());
    for (const TaskCheckpoints& task : *listed) {
      if (task.task.find("/job:ps/") != 0) continue;
      REQUIRE(!task.checkpoints.empty());
      CHECK(task.checkpoints.back().step == stopped_at);
    }
    // The ps restarts from that checkpoint for the next run.
    s.cluster.Kill("ps", 0);
    REQUIRE(s.cluster.Start("ps", 0).ok());
    CHECK(s.GlobalStep() == stopped_at);
    previous = stopped_at;
  }
}

// A cluster with a chief job (Kubeflow's TFJob, Estimator): chief:0 is the
// chief, and worker:0 only waits for its initialization, as in TensorFlow.
// Both trainers find their task through TF_CONFIG, without --target.
TEST_CASE("a cluster with a chief job: chief:0 initializes, worker:0 does not; target from TF_CONFIG") {
  LocalCluster cluster({{"chief", 1}, {"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.StartAll().ok());
  TempDir work;
  // global_step on the ps, one increment per step.
  work.Write("counter.txt", R"((
  nodes = [
    ( name = "global_step", op = "VariableV2", device = "/job:ps/task:0",
      attrs = [ (name = "dtype", value = (type = int64)),
                (name = "shape", value = (shape = (dims = []))) ] ),
    ( name = "zero", op = "Const",
      attrs = [ (name = "dtype", value = (type = int64)),
                (name = "value", value = (tensor = (dtype = int64, shape = [], int64Val = [0]))) ] ),
    ( name = "one", op = "Const",
      attrs = [ (name = "dtype", value = (type = int64)),
                (name = "value", value = (tensor = (dtype = int64, shape = [], int64Val = [1]))) ] ),
    ( name = "assign_global_step", op = "Assign", inputs = ["global_step", "zero"] ),
    ( name = "init", op = "NoOp", inputs = ["^assign_global_step"] ),
    ( name = "train", op = "AssignAdd", inputs = ["global_step", "one"] ),
    ( name = "train/global_step", op = "Identity", inputs = ["train"] )
  ] ))");
  std::vector<std::unique_ptr<ChildProcess>> runs;
  for (const std::string job : {"chief", "worker"}) {
    const Json tf_config{{"cluster", Json::parse(cluster.spec().ToJson())},
                         {"task", {{"type", job}, {"index", 0}}}};
    auto child = ChildProcess::Spawn({"env", "TF_CONFIG=" + tf_config.dump(), TfctlBinary(),
                                      "train", work.path() + "/counter.txt", "--steps", "30",
                                      "--output", "json", "--init-timeout", "60"});
    REQUIRE(child.ok());
    runs.push_back(std::move(child).value());
  }
  std::vector<Json> done;
  for (auto& run : runs) {
    auto status = run->Wait(120s);
    INFO(OneLine(run->Stderr()) << " | " << OneLine(run->Stdout()));
    REQUIRE(status.ok());
    REQUIRE(*status == 0);
    std::istringstream lines(run->Stdout());
    std::string line, last;
    while (std::getline(lines, line)) {
      if (!line.empty()) last = line;
    }
    done.push_back(Json::parse(last));
  }
  CHECK(done[0]["task"] == "/job:chief/replica:0/task:0");
  CHECK(done[0]["chief"] == true);
  CHECK(done[0]["initialized"] == true);
  CHECK(done[1]["task"] == "/job:worker/replica:0/task:0");
  CHECK(done[1]["chief"] == false);
  CHECK(done[1]["initialized"] == false);
  CHECK(done[0]["step"].get<int64_t>() + done[1]["step"].get<int64_t>() >= 30);
}

TEST_CASE("a variable no checkpoint holds is initialized; the restored ones keep their values") {
  TempDir checkpoints;
  TrainingCluster s(2, {"--checkpoint-dir=" + checkpoints.path()});
  REQUIRE(s.cluster.StartAll().ok());
  const examples::MnistOptions o{.workers = 2, .epochs = 1};
  s.TrainAll(s.Graph(o), 2, {"--checkpoint-every", "100"});  // saves at the end
  const int64_t trained = s.GlobalStep();
  s.cluster.Kill("ps", 0);
  REQUIRE(s.cluster.Start("ps", 0).ok());
  const int64_t restored = s.GlobalStep();
  REQUIRE(restored > 0);

  // The same model plus a variable the checkpoint does not hold: only that
  // one is initialized, so the restored step and weights survive.
  const auto done = s.TrainAll(s.Graph(o, /*extra=*/true), 2);
  CHECK(done[0]["initialized"] == true);
  CHECK(done[0]["initialized_variables"] == Json::array({"extra"}));
  // The input went back with the model: only what the ps lost runs again.
  CHECK(std::abs(s.GlobalStep() - trained) <= 2);
  CHECK(trained >= restored);
  auto ps = s.cluster.Connect("ps", 0);
  REQUIRE(ps.ok());
  auto extra = (*ps)->ReadVariable("extra", 5s);
  REQUIRE(extra.ok());
  CHECK(extra->second.data<float>()[0] == 7.0f);
}

}  // namespace
}  // namespace tfd::testing
