// What one kernel_bench run is asked to measure and what it measured,
// passed from the measuring code to the printing code
// (bench/kernel_bench_report.h).
//
// Thread-safety: plain values.
#pragma once

#include <string>
#include <vector>

#include "bench/alternating_timer.h"
#include "bench/classic_session.h"

namespace tfd::bench {

struct KernelBenchSetup {
  long rounds = 7;        // alternating rounds per kernel
  long round_ms = 30;     // each side's time per kernel round
  long step_rounds = 7;   // alternating rounds of whole steps
  long steps = 300;       // steps of each side per round
  long traced = 300;      // traced tfd steps for the per-op table
  int cpu = -1;           // everything runs pinned here
  bool torch = true;      // run ../shared/peers' torch eager MLP when torch is installed
  std::string peers_dir;  // holds run.sh
  std::string filter;     // only kernel cases whose op contains this
  bool large = true;      // large products on all CPUs (threaded MatMul)
  bool kernels = true;    // the per-kernel section
  bool step = true;       // the whole-step section
  bool conv = true;       // the Deep MNIST convolutions, one thread
  std::string json_path;  // --json: also write the figures there (bench/figures_json.h)
  // --matmul-scaling N: only MatMul [N, N] x [N, N] by intra-op threads
  // (bench/matmul_scaling.h); 0: the usual sections.
  long matmul_scaling = 0;
};

struct KernelFigures {
  std::string op, shapes, role;
  double check = 0;  // max |tfd - hand| / max |hand| after one call of each
  Paired times;      // a: tfd, b: hand-written Eigen; seconds per call
};

// What running a kernel costs before any arithmetic: the executor's
// context, output allocation (zero-filled) and release.
struct FixedCost {
  std::string what;
  double seconds = 0;  // per call, median over the rounds
};

struct StepFigures {
  Paired times;  // a: tfd's LocalSession step, b: the hand-written step; seconds
  double tfd_loss = 0, hand_loss = 0;  // after the last timed step
  OpTimes by_op;                       // over the traced steps
  long traced = 0;
  std::vector<double> traced_seconds;  // wall time of each traced step
  std::vector<double> torch_rates;     // steps/s, one per torch run
  std::string torch_note;              // why there is no torch figure
};

}  // namespace tfd::bench
