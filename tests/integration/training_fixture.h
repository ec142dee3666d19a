// Shared by the training tests: a cluster of real tfd tasks (1 or 2 ps, N
// workers) with a small generated IDX set whose classes are easy to tell
// apart, the examples/mnist graph for it, and `tfctl train` on every worker
// as separate processes, their JSON records read back.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "api/graph_file.h"
#include "api/variables.h"
#include "examples/mnist/mnist_model.h"
#include "kernels/register_all.h"
#include "tests/integration/child_process.h"
#include "tests/integration/cluster_fixture.h"
#include "tests/integration/temp_dir.h"

namespace tfd::testing {

using namespace std::chrono_literals;
using Json = nlohmann::json;

constexpr int kTrain = 1200, kTest = 200, kBatch = 50;

inline void AppendBigEndian(std::string& s, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) s.push_back(static_cast<char>((v >> shift) & 0xff));
}

// n 28x28 images: class k lights a 4-row band at rows 2k+2.., over noise.
inline void WriteDigits(const TempDir& dir, const std::string& prefix, int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string images, labels;
  AppendBigEndian(images, 0x803);
  AppendBigEndian(images, n);
  AppendBigEndian(images, 28);
  AppendBigEndian(images, 28);
  AppendBigEndian(labels, 0x801);
  AppendBigEndian(labels, n);
  for (int i = 0; i < n; ++i) {
    const int label = static_cast<int>(rng() % 10);
    labels.push_back(static_cast<char>(label));
    for (int r = 0; r < 28; ++r) {
      for (int c = 0; c < 28; ++c) {
        const bool lit = r >= 2 * label + 2 && r < 2 * label + 6;
        images.push_back(static_cast<char>(lit ? 200 + rng() % 56 : rng() % 60));
      }
    }
  }
  dir.Write(prefix + "-images", images);
  dir.Write(prefix + "-labels", labels);
}

struct TrainingCluster {
  TempDir data;
  TempDir work;
  LocalCluster cluster;

  explicit TrainingCluster(int workers, std::vector<std::string> flags = {}, int ps_tasks = 1)
      : cluster({{"ps", ps_tasks}, {"worker", workers}}, WithDataDir(flags)) {
    WriteDigits(data, "train", kTrain, 1);
    WriteDigits(data, "test", kTest, 2);
  }

  std::vector<std::string> WithDataDir(std::vector<std::string> flags) {
    flags.push_back("--data-dir=" + data.path());
    return flags;
  }

  // The examples/mnist graph for this data, written to a file (the strong
  // model, unless `o` asks for the large or the deep one); with `extra`, one
  // more variable on the ps ("extra", initialized to 7).
  std::string Graph(examples::MnistOptions o, bool extra = false) {
    if (o.model == examples::MnistModel::kClassic) o.model = examples::MnistModel::kStrong;
    o.batch_size = kBatch;
    o.train_examples = kTrain;
    o.test_batch = kTest;
    o.train_images = "train-images";
    o.train_labels = "train-labels";
    o.test_images = "test-images";
    o.test_labels = "test-labels";
    OpRegistry registry;
    REQUIRE(kernels::RegisterAll(registry).ok());
    Scope root = Scope::NewRootScope(registry);
    if (extra) {
      ops::Variable(root.WithOpName("extra").WithDevice("/job:ps/task:0"), {2}, DType::kFloat32,
                    ops::Initializer::Constant(7));
    }
    REQUIRE(examples::BuildMnist(root, o).ok());
    const std::string path = work.path() + (extra ? "/mnist-extra.capnp" : "/mnist.capnp");
    Status s = WriteGraphFile(root, path);
    INFO(s.ToString());
    REQUIRE(s.ok());
    return path;
  }

  // `tfctl train` on every worker at once, in the background; `flags` go to
  // every trainer.
  std::vector<std::unique_ptr<ChildProcess>> SpawnTrainers(const std::string& graph, int workers,
                                                           std::vector<std::string> chief_flags,
                                                           std::vector<std::string> flags = {},
                                                           int step_timeout_s = 30) {
    std::vector<std::unique_ptr<ChildProcess>> runs;
    for (int i = 0; i < workers; ++i) {
      std::vector<std::string> argv{TfctlBinary(), "train", graph, "--target",
                                    cluster.Address("worker", i), "--output", "json",
                                    "--step-timeout", std::to_string(step_timeout_s),
                                    "--init-timeout", "60"};
      argv.insert(argv.end(), flags.begin(), flags.end());
      if (i == 0) argv.insert(argv.end(), chief_flags.begin(), chief_flags.end());
      auto child = ChildProcess::Spawn(argv);
      REQUIRE(child.ok());
      runs.push_back(std::move(child).value());
    }
    return runs;
  }

  // `tfctl train` hosting worker:`task` itself (tfd's flags after "--"),
  // in the background; `flags` go to the trainer, `task_flags` to the task
  // (it gets --data-dir as the cluster's tfd processes do).
  std::unique_ptr<ChildProcess> SpawnHostingTrainer(const std::string& graph, int task,
                                                    std::vector<std::string> flags = {},
                                                    std::vector<std::string> task_flags = {}) {
    std::vector<std::string> argv{TfctlBinary(), "train", graph, "--output", "json",
                                  "--step-timeout", "30", "--init-timeout", "60"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    for (const std::string& a : {std::string("--"), std::string("--cluster"),
                                 cluster.spec().ToJson(), std::string("--job"),
                                 std::string("worker"), std::string("--task"),
                                 std::to_string(task), "--data-dir=" + data.path()}) {
      argv.push_back(a);
    }
    argv.insert(argv.end(), task_flags.begin(), task_flags.end());
    auto child = ChildProcess::Spawn(argv);
    REQUIRE(child.ok());
    return std::move(child).value();
  }

  // Each trainer's every JSON record, once it has exited with `status`;
  // the last is its "done" record when it finished.
  std::vector<std::vector<Json>> WaitTrainers(std::vector<std::unique_ptr<ChildProcess>>& runs,
                                              int expected_status = 0) {
    std::vector<std::vector<Json>> records;
    for (size_t i = 0; i < runs.size(); ++i) {
      auto status = runs[i]->Wait(120s);
      INFO("worker " << i << ": " << OneLine(runs[i]->Stderr()) << " | "
                     << OneLine(runs[i]->Stdout()));
      REQUIRE(status.ok());
      REQUIRE(*status == expected_status);
      std::istringstream lines(runs[i]->Stdout());
      std::string line;
      records.emplace_back();
      while (std::getline(lines, line)) {
        if (!line.empty()) records.back().push_back(Json::parse(line));
      }
      REQUIRE(!records.back().empty());
      REQUIRE(records.back().back()["event"] == "done");
    }
    return records;
  }

  // `tfctl train` on every worker at once; their final JSON records.
  std::vector<Json> TrainAll(const std::string& graph, int workers,
                             std::vector<std::string> chief_flags = {}) {
    auto runs = SpawnTrainers(graph, workers, std::move(chief_flags));
    std::vector<Json> done;
    for (const auto& records : WaitTrainers(runs)) done.push_back(records.back());
    return done;
  }

  // Polls the ps until global_step is at least `step` (the ps must be up;
  // the variable may not be initialized yet).
  int64_t WaitGlobalStep(int64_t step) {
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    auto ps = cluster.Connect("ps", 0);
    REQUIRE(ps.ok());
    int64_t now = -1;
    while (now < step && std::chrono::steady_clock::now() < deadline) {
      auto v = (*ps)->ReadVariable("global_step", 5s);
      // Uninitialized (before the chief's init): no value to read yet.
      if (v.ok() && v->first.initialized) now = v->second.scalar<int64_t>();
      if (now < step) std::this_thread::sleep_for(20ms);
    }
    INFO("global step " << now << ", waited for " << step);
    REQUIRE(now >= step);
    return now;
  }

  // Polls a running trainer's output (`tfctl train --output json`) until it
  // has printed a record of `event` ("recovering"), for up to 60 s.
  static void WaitTrainerRecord(const ChildProcess& run, const std::string& event) {
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    auto printed = [&run, &event]() {
      std::istringstream lines(run.Stdout());
      std::string line;
      while (std::getline(lines, line)) {
        // The last line may be half written: not a record yet.
        const Json record = Json::parse(line, nullptr, /*allow_exceptions=*/false);
        if (record.is_object() && record.value("event", "") == event) return true;
      }
      return false;
    };
    bool seen = false;
    while (!seen && std::chrono::steady_clock::now() < deadline) {
      seen = printed();
      if (!seen) std::this_thread::sleep_for(10ms);
    }
    INFO("no " << event << " record in 60 s: " << OneLine(run.Stdout()));
    REQUIRE(seen);
  }

  // Polls `job`:`task` until it has pushed a tensor over the data plane:
  // a worker task restarted under its trainer does once the trainer has
  // recovered and steps on it again (its gradients go to the ps).
  void WaitTaskPushing(const std::string& job, int task) {
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    uint64_t pushes = 0;
    while (pushes == 0 && std::chrono::steady_clock::now() < deadline) {
      auto client = cluster.Connect(job, task);
      if (client.ok()) {
        auto status = (*client)->GetStatus(5s);
        if (status.ok()) pushes = status->data_plane.pushes_sent;
      }
      if (pushes == 0) std::this_thread::sleep_for(20ms);
    }
    INFO(job << ":" << task << " pushed nothing in 60 s");
    REQUIRE(pushes > 0);
  }

  int64_t GlobalStep() {
    auto ps = cluster.Connect("ps", 0);
    INFO(ps.status().ToString() << "; ps log: " << OneLine(cluster.Log("ps", 0)));
    REQUIRE(ps.ok());
    auto v = (*ps)->ReadVariable("global_step", 5s);
    REQUIRE(v.ok());
    REQUIRE(v->first.initialized);
    return v->second.scalar<int64_t>();
  }

  // The step of the newest checkpoint the ps keeps: what a restarted ps
  // restored on start, read while no trainer can save a newer one. Reading
  // global_step instead races the trainers, which restore and step on as
  // soon as the ps is back.
  int64_t NewestPsCheckpoint() {
    // Asked of the ps itself: it is up once Start returned, while another
    // task's connection to it may still be coming back.
    auto ps = cluster.Connect("ps", 0);
    REQUIRE(ps.ok());
    auto listed = (*ps)->ListCheckpoints(30s, /*verify=*/false);
    INFO(listed.status().ToString());
    REQUIRE(listed.ok());
    for (const TaskCheckpoints& t : *listed) {
      if (t.task != "/job:ps/replica:0/task:0") continue;
      REQUIRE(!t.checkpoints.empty());
      return t.checkpoints.back().step;
    }
    FAIL("no answer from the ps in the checkpoint list");
    return -1;
  }
};

// The checkpoint steps the trainers restored on every task, all of them:
// after a ps restart whichever trainer sees it first restores.
inline std::vector<int64_t> Restores(const std::vector<std::vector<Json>>& records) {
  std::vector<int64_t> steps;
  for (const auto& r : records) {
    for (const Json& s : r.back()["restored_checkpoints"]) steps.push_back(s.get<int64_t>());
  }
  return steps;
}

// A trainer's run learned: its last loss below half the model's loss before
// training (by default its own first step's), and the test accuracy high.
inline void CheckLearned(const Json& j, std::optional<double> initial_loss = std::nullopt) {
  INFO(j.dump());
  CHECK(j["loss"].get<double>() < 0.5 * initial_loss.value_or(j["first_loss"].get<double>()));
  CHECK(j["accuracy"].get<double>() > 0.8);
}

// CheckLearned for every replica of one run. The model's loss before
// training is the highest first loss among them: a replica that starts late
// (a backup worker under load) takes its first step on a model the others
// have already trained, so its own first loss says nothing about learning.
inline void CheckAllLearned(const std::vector<Json>& done) {
  double initial = 0;
  for (const Json& j : done) initial = std::max(initial, j["first_loss"].get<double>());
  for (const Json& j : done) CheckLearned(j, initial);
}

}  // namespace tfd::testing
