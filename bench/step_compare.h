// The classic model's whole training step three ways, in one process
// pinned to one CPU: tfd's LocalSession (one pool thread) and the step
// hand-written in Eigen (bench/hand_mlp.h) in alternating rounds, then
// traced tfd steps for the per-op table, then torch eager once per round
// when asked and installed.
//
//   TFD_ASSIGN_OR_RETURN(StepFigures f, MeasureClassicStep(setup));
//
// Thread-safety: the benchmark's main thread, already pinned.
#pragma once

#include "bench/kernel_bench_figures.h"
#include "common/status.h"

namespace tfd::bench {

StatusOr<StepFigures> MeasureClassicStep(const KernelBenchSetup& setup);

}  // namespace tfd::bench
