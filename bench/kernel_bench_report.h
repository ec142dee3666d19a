// kernel_bench's tables: the kernels against hand-written Eigen, the whole
// step against the hand-written step and torch, where tfd's step goes, and
// the verdicts on the targets (each at >= 0.8 of Eigen's pace).
//
//   PrintKernelBenchHeader(setup);
//   PrintKernelTable(setup, kernel_figures);
//   PrintStepTable(setup, step_figures);
//
// Thread-safety: writes to stdout.
#pragma once

#include <string>
#include <vector>

#include "bench/figures_json.h"
#include "bench/kernel_bench_figures.h"

namespace tfd::bench {

// What the bench's results depend on: the machine, the pinning, the build.
// "MatMul's GEMM: blas (OpenBLAS built in, its kernels for this CPU: Haswell)".
std::string GemmDescription();

void PrintKernelBenchHeader(const KernelBenchSetup& setup);
// `fixed` may be empty (no fixed-cost lines).
void PrintKernelTable(const KernelBenchSetup& setup, const std::string& title,
                      const std::vector<KernelFigures>& figures,
                      const std::vector<FixedCost>& fixed);
void PrintStepTable(const KernelBenchSetup& setup, const StepFigures& figures);
void PrintKernelBenchFooter();

// The same figures for --json: in `table`, a row per kernel ("op shapes, role")
// with series "pace" (Eigen's time / tfd's, per round), "tfd" and
// "hand-written Eigen" (µs per call); table "classic step": steps/s of tfd,
// the hand-written step and torch eager.
void AddKernelFigures(const std::string& table, const std::vector<KernelFigures>& figures,
                      FiguresJson& out);
void AddStepFigures(const StepFigures& figures, FiguresJson& out);

}  // namespace tfd::bench
