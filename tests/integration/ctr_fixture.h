// Shared by the wide & deep tests: Criteo TSV lines labelled by a hidden
// logistic model the examples/ctr model can represent (a weight per table
// row and per log(1 + I_j), as ../shared/peers' CtrSynth), and a cluster of
// 2 ps tasks and N workers holding a training and a held-out file of them,
// with the examples/ctr graph for that data.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "common/graph_def.h"
#include "examples/ctr/ctr_model.h"
#include "kernels/data/criteo_line.h"
#include "tests/integration/training_fixture.h"

namespace tfd::testing {

constexpr int64_t kCtrVocab = 1 << 12;
constexpr int kCtrTrainExamples = 4096, kCtrEvalExamples = 1024, kCtrBatch = 128;
constexpr int kCtrValuesPerField = 40;  // distinct categories a field draws from

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
        const auto rank = static_cast<uint32_t>(kCtrValuesPerField * unit(rng) * unit(rng));
        const uint32_t value = kernels::data::Fmix32(rank * 131 + static_cast<uint32_t>(f) + 1);
        char hex[9];
        std::snprintf(hex, sizeof hex, "%08x", value);
        cats += hex;
        logit += w_row[static_cast<size_t>(kernels::data::CriteoRow(value, f, kCtrVocab))];
      }
      const int label = unit(rng) < 1 / (1 + std::exp(-logit)) ? 1 : 0;
      out += std::to_string(label) + dense + cats + "\n";
      logits.push_back(logit);
      labels.push_back(label);
    }
    return out;
  }

  std::mt19937 rng;
  std::vector<double> w_row = std::vector<double>(kCtrVocab);
  std::vector<double> w_dense = std::vector<double>(kernels::data::kCriteoDense);
};

// The pairwise AUC of `scores` (ties a half): the oracle's, for the log.
inline double PairwiseAuc(const std::vector<double>& scores, const std::vector<int>& labels) {
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
  // `flags` go to every tfd task.
  explicit CtrCluster(int workers, std::vector<std::string> flags = {}, int ps_tasks = 2)
      : s(workers, std::move(flags), ps_tasks), ps_tasks(ps_tasks) {
    CtrData gen(7);
    std::vector<double> train_logits, eval_logits;
    std::vector<int> train_labels, eval_labels;
    s.data.Write("ctr-train.tsv", gen.Lines(kCtrTrainExamples, train_logits, train_labels));
    s.data.Write("ctr-eval.tsv", gen.Lines(kCtrEvalExamples, eval_logits, eval_labels));
    oracle = PairwiseAuc(eval_logits, eval_labels);
  }

  // The examples/ctr graph for this data with `o`'s replication, in a file.
  // A `vocab` other than the data's gives tables the data does not fill.
  std::string Graph(examples::CtrOptions o, int64_t vocab = kCtrVocab) {
    o.ps_tasks = ps_tasks;
    o.vocab = vocab;
    o.batch_size = kCtrBatch;
    o.learning_rate = 0.01;
    o.eval_examples = kCtrEvalExamples;
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
  int ps_tasks;
  double oracle = 0;
};

}  // namespace tfd::testing
