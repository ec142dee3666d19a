// The sparse path under failure: the wide & deep model (examples/ctr), its
// tables split over 2 ps tasks and trained with sparse Adagrad by the
// self-healing trainer, survives kill -9 of a ps holding a shard, twice in
// a row (the second while the trainer recovers from the first), as the
// dense path does (training_test.cc); and one ps alone refuses a table
// larger than its memory budget with an error naming the table's shard.
#include <catch2/catch.hpp>

#include <signal.h>

#include <cstring>
#include <regex>
#include <utility>
#include <string>
#include <vector>

#include "common/tensor_bundle/checkpoint_file.h"
#include "tests/integration/ctr_fixture.h"

namespace tfd::testing {
namespace {

// The newest checkpoint `task` (e.g. "ps", 1) keeps, asked of the task
// itself.
CheckpointInfo NewestCheckpoint(LocalCluster& cluster, const std::string& job, int task) {
  auto client = cluster.Connect(job, task);
  REQUIRE(client.ok());
  auto listed = (*client)->ListCheckpoints(30s, /*verify=*/false);
  INFO(listed.status().ToString());
  REQUIRE(listed.ok());
  const std::string name = "/job:" + job + "/replica:0/task:" + std::to_string(task);
  for (const TaskCheckpoints& t : *listed) {
    if (t.task != name || t.checkpoints.empty()) continue;
    return t.checkpoints.back();
  }
  FAIL("no checkpoint of " << name << " in the list");
  return {};
}

// Every variable in checkpoint file `path` (the shards of the tables, their
// Adagrad accumulators, the MLP's part) holds on `job`:`task` exactly the
// saved value; returns their names.
std::vector<std::string> CheckHoldsCheckpoint(LocalCluster& cluster, const std::string& job,
                                              int task, const std::string& path) {
  auto reader = kernels::CheckpointReader::Open(path);
  INFO(path << ": " << reader.status().ToString());
  REQUIRE(reader.ok());
  auto client = cluster.Connect(job, task);
  REQUIRE(client.ok());
  std::vector<std::string> names;
  for (const kernels::CheckpointEntry& e : (*reader)->entries()) {
    if (e.name.empty() || e.name[0] == '@') continue;  // input positions, slice notes
    INFO("variable " << e.name << " on " << job << ":" << task);
    auto saved = (*reader)->ReadTensor(e);
    REQUIRE(saved.ok());
    auto held = (*client)->ReadVariable(e.name, 10s);
    INFO(held.status().ToString());
    REQUIRE(held.ok());
    REQUIRE(held->first.initialized);
    REQUIRE(held->second.dtype() == saved->dtype());
    REQUIRE(held->second.shape() == saved->shape());
    CHECK(std::memcmp(held->second.raw_data(), saved->raw_data(), saved->total_bytes()) == 0);
    names.push_back(e.name);
  }
  return names;
}

// How many of `names` are a shard of `table` ("wide/part_1"), and how many
// a shard's Adagrad accumulator ("wide/part_1/Adagrad").
std::pair<int, int> ShardsAndAccumulators(const std::vector<std::string>& names,
                                          const std::string& table) {
  const std::regex shard(table + "/part_[0-9]+"), accumulator(table + "/part_[0-9]+/Adagrad");
  std::pair<int, int> counts;
  for (const std::string& n : names) {
    if (std::regex_match(n, shard)) ++counts.first;
    if (std::regex_match(n, accumulator)) ++counts.second;
  }
  return counts;
}

// kill -9 of ps:1 (a shard of both tables and their accumulators, not
// global_step) mid-run, restarted, and killed again the moment it listens,
// while the trainer recovers. The ps comes back with its own newest
// checkpoint, value for value; the trainer, seeing a task gone back alone,
// restores that step on every task (ps:0's shards, the worker's input), so
// training ends at the planned global step with the held-out AUC above the
// floor, and every checkpoint left verifies.
TEST_CASE("wide & deep: a ps holding a shard killed twice in a row, training finishes") {
  TempDir checkpoints;
  CtrCluster c(/*workers=*/1, {"--checkpoint-dir=" + checkpoints.path()});
  constexpr int kEpochs = 12, kSteps = kEpochs * kCtrTrainExamples / kCtrBatch;
  const std::string graph = c.Graph({.epochs = kEpochs});
  REQUIRE(c.s.cluster.StartAll().ok());
  auto runs = c.s.SpawnTrainers(graph, 1, {"--checkpoint-every", "30"});
  c.s.WaitGlobalStep(100);
  c.s.cluster.Kill("ps", 1);
  // A step fails on the dead ps before it comes back. On a loaded machine
  // the trainer could sleep through the whole outage and find the new ps
  // between two steps, which its master absorbs without a failed step.
  c.s.WaitTrainerRecord(*runs[0], "recovering");
  REQUIRE(c.s.cluster.Start("ps", 1).ok());
  // Killed again while the trainer recovers from the first.
  c.s.cluster.Kill("ps", 1);
  // The trainer waits while the ps is down; stopped across the restart, it
  // cannot touch the restored values before they are compared.
  runs[0]->Signal(SIGSTOP);
  REQUIRE(c.s.cluster.Start("ps", 1).ok());
  const CheckpointInfo back = NewestCheckpoint(c.s.cluster, "ps", 1);
  CHECK(back.step < 100 + 30);
  // A shard of each table and its accumulator are among what came back.
  const std::vector<std::string> held = CheckHoldsCheckpoint(c.s.cluster, "ps", 1, back.path);
  INFO("ps:1 holds " << held.size() << " variables");
  CHECK(ShardsAndAccumulators(held, "embedding") == std::pair<int, int>(1, 1));
  CHECK(ShardsAndAccumulators(held, "wide") == std::pair<int, int>(1, 1));
  {
    auto ps = c.s.cluster.Connect("ps", 1);
    REQUIRE(ps.ok());
    auto status = (*ps)->GetStatus(5s);
    REQUIRE(status.ok());
    CHECK(status->restored_alone);
  }
  runs[0]->Signal(SIGCONT);

  const auto records = c.s.WaitTrainers(runs);
  const Json& done = records[0].back();
  INFO(done.dump() << " | ps:1 came back at step " << back.step);
  CHECK(done["stopped"] == "input exhausted");
  CHECK(done["recoveries"].get<int>() >= 1);
  const std::vector<int64_t> restored = Restores(records);
  REQUIRE(!restored.empty());
  CHECK(restored.back() == back.step);
  // The input went back with the model: the lost steps ran again on the
  // same batches, and the global step is the plan's.
  CHECK(done["global_step"] == kSteps);
  CHECK(c.s.GlobalStep() == kSteps);
  c.CheckAuc(done);

  auto client = c.s.cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  auto listed = (*client)->ListCheckpoints(30s, /*verify=*/true);
  INFO(listed.status().ToString());
  REQUIRE(listed.ok());
  for (const TaskCheckpoints& t : *listed) {
    for (const CheckpointInfo& info : t.checkpoints) {
      INFO(info.path << ": " << info.problem);
      CHECK(info.verified);
    }
  }
}

// A table larger than one ps may hold: 2^17 rows x 16 float32 (8 MiB) on a
// single ps with a 4 MiB budget. The chief's initialization fails with
// RESOURCE_EXHAUSTED naming the table's shard, the trainer exits 1, and the
// ps goes on serving.
TEST_CASE("wide & deep: one ps refuses a table larger than its memory budget") {
  CtrCluster c(/*workers=*/1, {}, /*ps_tasks=*/1);
  const std::string graph = c.Graph({.epochs = 1}, /*vocab=*/int64_t{1} << 17);
  REQUIRE(c.s.cluster.Start("ps", 0, {"--memory-budget=4M"}).ok());
  REQUIRE(c.s.cluster.Start("worker", 0).ok());
  auto runs = c.s.SpawnTrainers(graph, 1, {});
  auto status = runs[0]->Wait(120s);
  const std::string err = runs[0]->Stderr();
  INFO(OneLine(err) << " | " << OneLine(runs[0]->Stdout()));
  REQUIRE(status.ok());
  CHECK(*status == 1);
  CHECK(err.find("error: RESOURCE_EXHAUSTED") != std::string::npos);
  CHECK(err.find("embedding/part_0") != std::string::npos);
  CHECK(c.s.cluster.Pid("ps", 0) > 0);
  auto ps = c.s.cluster.Connect("ps", 0);
  REQUIRE(ps.ok());
  CHECK((*ps)->GetStatus(5s).ok());
}

}  // namespace
}  // namespace tfd::testing
