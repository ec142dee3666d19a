// The wide & deep CTR example (examples/ctr) trained by `tfctl train` on a
// real cluster of 2 ps tasks and 1 worker, on Criteo TSV files generated
// here from a hidden logistic model the model can represent (a weight per
// table row and per log(1 + I_j), as ../shared/peers' CtrSynth): the
// held-out AUC the trainer reports must clear a floor well above chance.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "common/graph_def.h"
#include "examples/ctr/ctr_model.h"
#include "kernels/data/criteo_line.h"
#include "tests/integration/training_fixture.h"

namespace tfd::testing {
namespace {

constexpr int64_t kVocab = 1 << 12;
constexpr int kTrainExamples = 4096, kEvalExamples = 1024, kBatch = 128;
constexpr int kValuesPerField = 40;  // distinct categories a field draws from

// The hidden model, and the TSV lines it labels.
struct CtrData {
  explicit CtrData(uint32_t seed) : rng(seed) {
    std::normal_distribution<double> row_weight(0.0, 0.8), dense_weight(0.0, 0.4);
    for (auto& w : w_row) w = row_weight(rng);
    for (auto& w : w_dense) w = dense_weight(rng);
  }

  // n lines; the hidden logit of each goes to `logits`.
  std::string Lines(int n, std::vector<double>& logits, std::vector<int>& labels) {
    std::string out;
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::normal_distribution<double> normal(0.0, 1.0);
    for (int i = 0; i < n; ++i) {
      double logit = -1.0;
      std::string dense, cats;
      for (int j = 0; j < kernels::data::kCriteoDense; ++j) {
        dense += "\t";
        if (unit(rng) < 0.2) continue;  // empty: reads as 0
        const auto count = static_cast<int64_t>(std::floor(std::expm1(std::abs(normal(rng)) * 2)));
        dense += std::to_string(count);
        logit += w_dense[j] * std::log1p(static_cast<double>(count));
      }
      for (int f = 0; f < kernels::data::kCriteoCategorical; ++f) {
        cats += "\t";
        if (unit(rng) < 0.1) continue;  // empty: no row
        // Skewed: low ranks are common, as in click logs.
        const auto rank = static_cast<uint32_t>(kValuesPerField * unit(rng) * unit(rng));
        const uint32_t value = kernels::data::Fmix32(rank * 131 + static_cast<uint32_t>(f) + 1);
        char hex[9];
        std::snprintf(hex, sizeof hex, "%08x", value);
        cats += hex;
        logit += w_row[static_cast<size_t>(kernels::data::CriteoRow(value, f, kVocab))];
      }
      const int label = unit(rng) < 1 / (1 + std::exp(-logit)) ? 1 : 0;
      out += std::to_string(label) + dense + cats + "\n";
      logits.push_back(logit);
      labels.push_back(label);
    }
    return out;
  }

  std::mt19937 rng;
  std::vector<double> w_row = std::vector<double>(kVocab);
  std::vector<double> w_dense = std::vector<double>(kernels::data::kCriteoDense);
};

// The pairwise AUC of `scores` (ties a half): the oracle's, for the log.
double PairwiseAuc(const std::vector<double>& scores, const std::vector<int>& labels) {
  double wins = 0, pairs = 0;
  for (size_t i = 0; i < scores.size(); ++i) {
    for (size_t j = 0; j < scores.size(); ++j) {
      if (labels[i] != 1 || labels[j] != 0) continue;
      pairs += 1;
      wins += scores[i] > scores[j] ? 1 : scores[i] == scores[j] ? 0.5 : 0;
    }
  }
  return wins / pairs;
}

// A cluster of 2 ps tasks and `workers` workers holding the generated
// training and held-out files, and the oracle's held-out AUC.
struct CtrCluster {
  explicit CtrCluster(int workers) : s(workers, {}, /*ps_tasks=*/2) {
    CtrData gen(7);
    std::vector<double> train_logits, eval_logits;
    std::vector<int> train_labels, eval_labels;
    s.data.Write("ctr-train.tsv", gen.Lines(kTrainExamples, train_logits, train_labels));
    s.data.Write("ctr-eval.tsv", gen.Lines(kEvalExamples, eval_logits, eval_labels));
    oracle = PairwiseAuc(eval_logits, eval_labels);
  }

  // The examples/ctr graph for this data with `o`'s replication, in a file.
  std::string Graph(examples::CtrOptions o) {
    o.ps_tasks = 2;
    o.vocab = kVocab;
    o.batch_size = kBatch;
    o.learning_rate = 0.01;
    o.eval_examples = kEvalExamples;
    OpRegistry registry;
    REQUIRE(kernels::RegisterAll(registry).ok());
    Scope root = Scope::NewRootScope(registry);
    REQUIRE(examples::BuildCtr(root, o).ok());
    const std::string graph = s.work.path() + "/ctr.capnp";
    REQUIRE(WriteGraphFile(root, graph).ok());
    return graph;
  }

  // The held-out AUC the chief reported clears the floor, and is no better
  // than the hidden model's (a check that the AUC is of held-out data).
  void CheckAuc(const Json& done) const {
    INFO(done.dump() << "; oracle AUC " << oracle);
    REQUIRE(done["auc"].is_number());
    const double auc = done["auc"].get<double>();
    // The oracle reaches about 0.96 on this held-out set, the model about
    // 0.9 in these runs; chance is 0.5.
    CHECK(auc > 0.80);
    CHECK(auc <= oracle + 0.02);
  }

  TrainingCluster s;
  double oracle = 0;
};

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
  REQUIRE(examples::BuildCtr(root, {.ps_tasks = 2, .vocab = kVocab}).ok());
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
  CHECK(done[0]["step"] == 3 * kTrainExamples / kBatch);
  CHECK(done[0]["loss"].get<double>() < done[0]["first_loss"].get<double>());
  c.CheckAuc(done[0]);
}

TEST_CASE("wide & deep with synchronous replicas: 2 workers, each update averaging both") {
  CtrCluster c(/*workers=*/2);
  // 3 epochs of the training file: each update takes a batch from each worker.
  constexpr int64_t kSteps = 3 * kTrainExamples / (2 * kBatch);
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
