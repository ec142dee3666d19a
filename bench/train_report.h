// The tables train_bench prints: steps/s in one process and on a cluster
// with the target's verdict, the phases of a traced step, and what each
// process spent per step (from /proc).
//
//   PrintTrainReport(setup, figures);
//   AddTrainFigures(setup, figures, json);  // for --json
//
// Thread-safety: writes to stdout.
#pragma once

#include <optional>

#include "bench/figures_json.h"
#include "bench/raw_ps.h"
#include "bench/train_runs.h"

namespace tfd::bench {

// 1 ps + 1 worker steps/s over single-process steps/s (2 CPUs), at least
// (issue 12's target for the classic model).
inline constexpr double kTrainTarget = 0.7;
// tfctl train's loop with its hooks over the bench's own loop, at least
// (issue 35: the hooks must cost nothing).
inline constexpr double kTrainerLoopTarget = 0.95;
// 1 ps + 1 worker's ms/step over the one process's on worker:0's CPUs, at
// most (issue 40: the parameters' traffic hidden behind the compute).
inline constexpr double kOverlapTarget = 1.15;

struct TrainBenchFigures {
  TrainFigures local;      // one process, every CPU
  TrainFigures local_one;  // one process, worker:0's CPUs (CPU A with --cpus-per-task 0)
  TrainFigures one_worker;
  std::optional<TrainFigures> one_worker_unpinned;
  std::optional<TrainFigures> one_worker_hosted;  // worker:0 in the client's process
  std::optional<TrainFigures> one_worker_trainer;  // unpinned, tfctl train's loop and the bench's
  std::optional<TrainFigures> two_workers;
  std::optional<TrainFigures> two_workers_hosted;  // each worker in its client's process
  std::optional<RawPsFigures> floor;  // the classic model only
};

// The header's lines on who runs on which CPUs (and device).
void PrintPlacement(const TrainSetup& setup);

void PrintTrainReport(const TrainSetup& setup, const TrainBenchFigures& f);

// The steps/s of the report's first table (and the floor's) as figures of
// table "classic" or "large": a row per configuration, series "tfd" and its
// variants, "hand-written Eigen" and "the floor (raw ps)".
void AddTrainFigures(const TrainSetup& setup, const TrainBenchFigures& f, FiguresJson& out);

// Each process's resident memory at each sample, and its change from the
// first sample to the last against issue 12's bound.
inline constexpr double kRssFlatBound = 0.05;
void PrintRssReport(const RssFigures& f);

}  // namespace tfd::bench
