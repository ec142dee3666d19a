// A benchmark's figures as one JSON document (`--json FILE` of rpc_bench,
// train_bench, kernel_bench, gpu_bench and load_bench), the input of
// bench/plot_figures.py and of docs/performance.md's tables. One schema for
// every bench, so the plot script and the committed files in bench/data/
// read the same way whichever bench wrote them:
//
//   {"schema": "tfd-bench-figures/1", "bench": "train_bench",
//    "date": "2026-11-27T15:04:05Z", "command": "build/bench/train_bench ...",
//    "host": {"cpu": ..., "cpus": 2, "kernel": ..., "load_before": ..., "load_after": ...},
//    "figures": [{"table": "classic", "row": "1 ps + 1 worker", "series": "tfd",
//                 "unit": "steps/s", "value": 1041.4, "low": 1002.3, "high": 1060.8,
//                 "samples": 3}, ...]}
//
// `value` is the figure the bench prints (a median); `low` and `high`, when
// present, the range it came from (repetitions, rounds, transfers). Any
// other key of a figure (p99, ...) is extra detail. Files written by hand
// from older notes (bench/data/) add "source", and may give a null `value`
// where only a range was kept.
//
//   FiguresJson out("train_bench", argc, argv);
//   out.AddSamples("classic", "1 ps + 1 worker", "tfd", "steps/s", rates);
//   TFD_RETURN_IF_ERROR(out.Write(path));
//
// Thread-safety: none; one thread builds and writes it.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace tfd::bench {

class FiguresJson {
 public:
  // Records the command line, the machine and its load average now.
  FiguresJson(const std::string& bench, int argc, char** argv);

  // One figure; the returned object takes extra keys.
  nlohmann::json& Add(const std::string& table, const std::string& row,
                      const std::string& series, const std::string& unit, double value);
  // One figure from its samples: the median, the range and their count.
  // Nothing is added when `samples` is empty.
  void AddSamples(const std::string& table, const std::string& row, const std::string& series,
                  const std::string& unit, const std::vector<double>& samples);

  // Writes the document to `path` (replacing it), with the load average
  // now. Does nothing when `path` is empty; INTERNAL naming the path when it
  // cannot be written.
  Status Write(const std::string& path);

 private:
  nlohmann::json doc_;
};

}  // namespace tfd::bench
