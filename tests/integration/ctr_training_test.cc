// The wide & deep CTR example (examples/ctr) trained by `tfctl train` on a
// real cluster of 2 ps tasks and 1 worker, on Criteo TSV files generated
// here from a hidden logistic model the model can represent (a weight per
// table row and per log(1 + I_j), as ../shared/peers' CtrSynth): the
// held-out AUC the trainer reports must clear a floor well above chance.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "tests/integration/ctr_fixture.h"

namespace tfd::testing {
namespace {

// "<op>@<device>" of every op that updates a variable in place (an Apply*
// or Scatter* kernel), by the variable it updates (its first input).
std::map<std::string, std::vector<std::string>> UpdatesByVariable(const Scope& root) {
  std::map<std::string, std::vector<std::string>> updates;
  for (int id = 0; id < root.num_nodes(); ++id) {
    const NodeDef& node = root.node(id);
    const bool update = node.op.find("Apply") != std::string::npos ||
                        node.op.rfind("Scatter", 0) == 0;
    if (!update || node.inputs.empty()) continue;
    auto var = ParseInput(node.inputs[0]);
    REQUIRE(var.ok());
    updates[var->node].push_back(node.op + "@" + node.device);
  }
  return updates;
}

TEST_CASE("wide & deep updates the table rows a batch touches with Adagrad on their ps task") {
  OpRegistry registry;
  REQUIRE(kernels::RegisterAll(registry).ok());
  Scope root = Scope::NewRootScope(registry);
  REQUIRE(examples::BuildCtr(root, {.ps_tasks = 2, .vocab = kCtrVocab}).ok());
  const auto updates = UpdatesByVariable(root);
  const auto device_of = [&](const std::string& name) {
    const int id = root.FindNode(name);
    REQUIRE(id >= 0);
    return root.node(id).device;
  };
  const auto updates_of = [&](const std::string& name) {
    const auto it = updates.find(name);
    return it == updates.end() ? std::vector<std::string>{} : it->second;
  };
  // Each shard of both tables: one sparse Adagrad update, where it lives;
  // no dense update that would read or write every row.
  for (const std::string table : {"embedding", "wide"}) {
    for (int part = 0; part < 2; ++part) {
      const std::string shard = table + "/part_" + std::to_string(part);
      CHECK(device_of(shard).rfind("/job:ps/task:", 0) == 0);
      CHECK(updates_of(shard) == std::vector<std::string>{"SparseApplyAdagrad@" + device_of(shard)});
    }
  }
  // The MLP: dense Adam, as the peer.
  for (const std::string layer : {"w1", "b1", "w2", "b2", "w3", "b3"}) {
    CHECK(updates_of(layer) == std::vector<std::string>{"ApplyAdam@" + device_of(layer)});
  }
}

TEST_CASE("wide & deep on 2 ps tasks learns generated click data to a held-out AUC floor") {
  CtrCluster c(/*workers=*/1);
  const std::string graph = c.Graph({.epochs = 3});
  REQUIRE(c.s.cluster.StartAll().ok());
  const auto done = c.s.TrainAll(graph, 1);
  INFO(done[0].dump());
  CHECK(done[0]["stopped"] == "input exhausted");
  CHECK(done[0]["step"] == 3 * kCtrTrainExamples / kCtrBatch);
  CHECK(done[0]["epoch"] == 3.0);  // every epoch read, the last batch ending the third
  CHECK(done[0]["loss"].get<double>() < done[0]["first_loss"].get<double>());
  c.CheckAuc(done[0]);
}

TEST_CASE("wide & deep with synchronous replicas: 2 workers, each update averaging both") {
  CtrCluster c(/*workers=*/2);
  // 3 epochs of the training file: each update takes a batch from each worker.
  constexpr int64_t kSteps = 3 * kCtrTrainExamples / (2 * kCtrBatch);
  const std::string graph = c.Graph({.workers = 2, .sync = true, .max_steps = kSteps});
  REQUIRE(c.s.cluster.StartAll().ok());
  const auto done = c.s.TrainAll(graph, 2);
  for (const Json& j : done) {
    INFO(j.dump());
    CHECK(j["stopped"] == "reached step " + std::to_string(kSteps));
  }
  CHECK(done[0]["chief"] == true);
  c.CheckAuc(done[0]);
}

}  // namespace
}  // namespace tfd::testing
