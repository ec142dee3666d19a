#include "bench/kernel_bench_report.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>

#include "bench/stats.h"
#include "bench/proc_counters.h"
#include "common/cpu_features.h"
#include "kernels/math/gemm.h"

namespace tfd::bench {
namespace {

constexpr double kTarget = 0.8;  // of Eigen's pace

double Min(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::min_element(v.begin(), v.end());
}
double Max(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

std::vector<double> Rates(const std::vector<double>& seconds_per_step) {
  std::vector<double> r;
  for (double s : seconds_per_step) r.push_back(s > 0 ? 1 / s : 0);
  return r;
}

}  // namespace

std::string GemmDescription() {
  const std::string core = kernels::BlasCoreName();
  return "MatMul's GEMM: " + std::string(kernels::GemmBackendName(kernels::GemmBackendInUse())) +
         (core.empty() ? std::string(" (no OpenBLAS in this build)")
                       : " (OpenBLAS built in, its kernels for this CPU: " + core + ")");
}

void PrintKernelBenchHeader(const KernelBenchSetup& o) {
  std::printf(
      "kernel_bench: %u CPUs (%s); the classic kernels and step pinned to CPU %d; "
      "built with -Dcpu=%s\n%s\n",
      std::thread::hardware_concurrency(), ProcLine("/proc/cpuinfo", "model name").c_str(), o.cpu,
      std::string(CpuTarget()).c_str(), GemmDescription().c_str());
  std::printf("load average before: %s\n\n", ProcLine("/proc/loadavg").c_str());
  std::fflush(stdout);
}

void PrintKernelTable(const KernelBenchSetup& o, const std::string& title,
                      const std::vector<KernelFigures>& figures,
                      const std::vector<FixedCost>& fixed) {
  std::printf(
      "%s\nagainst the same computation hand-written in Eigen on the same shapes;\n"
      "%ld alternating rounds of ~%ld ms a side. us: median per call. pace: Eigen's time /\n"
      "tfd's, per round (1 = as fast; target >= %.2f). diff: max |tfd - Eigen| / max |Eigen|\n"
      "after one call of each.\n",
      title.c_str(), o.rounds, o.round_ms, kTarget);
  std::printf("  %-29s %-27s %-24s %8s %8s %6s %13s %8s\n", "op", "shapes", "in the step", "tfd us",
              "Eigen us", "pace", "[min - max]", "diff");
  int met = 0;
  std::string missed;
  for (const KernelFigures& f : figures) {
    const std::vector<double> pace = f.times.Ratios();
    const double median = Median(pace);
    std::printf("  %-29s %-27s %-24s %8.2f %8.2f %6.2f [%4.2f - %4.2f] %8.1e\n", f.op.c_str(),
                f.shapes.c_str(), f.role.c_str(), Median(f.times.a) * 1e6, Median(f.times.b) * 1e6,
                median, Min(pace), Max(pace), f.check);
    if (median >= kTarget) {
      ++met;
    } else {
      char buf[160];
      std::snprintf(buf, sizeof(buf), "%s%s %s (%.2f)", missed.empty() ? "" : ", ", f.op.c_str(),
                    f.shapes.c_str(), median);
      missed += buf;
    }
  }
  std::printf("  target: each kernel at >= %.2f of Eigen's pace: met by %d of %zu%s%s\n", kTarget,
              met, figures.size(), missed.empty() ? "" : "; missed: ", missed.c_str());
  if (!fixed.empty()) {
    std::printf(
        "  what a kernel call costs before any arithmetic (the context, the zero-filled\n"
        "  output's allocation and release), us:\n");
    for (const FixedCost& c : fixed)
      std::printf("    %-52s %6.2f\n", c.what.c_str(), c.seconds * 1e6);
  }
  std::printf("\n");
  std::fflush(stdout);
}

void PrintStepTable(const KernelBenchSetup& o, const StepFigures& f) {
  std::printf(
      "The classic step (784-100-10 sigmoid, batch 100, SGD) in one process, one thread;\n"
      "%ld alternating rounds of %ld steps a side, torch between them.\n",
      o.step_rounds, o.steps);
  std::printf("  %-52s %9s %9s %9s %8s\n", "", "steps/s", "min", "max", "ms/step");
  const auto row = [](const char* what, const std::vector<double>& rates) {
    std::printf("  %-52s %9.1f %9.1f %9.1f %8.3f\n", what, Median(rates), Min(rates), Max(rates),
                Median(rates) > 0 ? 1000 / Median(rates) : 0);
  };
  const std::vector<double> tfd = Rates(f.times.a), hand = Rates(f.times.b);
  row("tfd: LocalSession, the examples/mnist graph", tfd);
  row("hand-written Eigen (mlp_eigen.cc's step, same flags)", hand);
  if (!f.torch_rates.empty()) row("torch eager (peers' run.sh mlp, 1 thread)", f.torch_rates);
  const std::vector<double> pace = f.times.Ratios();
  std::printf("  tfd / hand Eigen, per round: %.2f [%.2f - %.2f]; target >= %.2f: %s\n",
              Median(pace), Min(pace), Max(pace), kTarget,
              Median(pace) >= kTarget ? "met" : "NOT met");
  if (!f.torch_rates.empty()) {
    std::vector<double> vs_torch;
    for (size_t i = 0; i < f.torch_rates.size() && i < tfd.size(); ++i) {
      vs_torch.push_back(tfd[i] / f.torch_rates[i]);
    }
    std::printf("  tfd / torch eager, per round: %.2f [%.2f - %.2f]; target >= 1.00: %s\n",
                Median(vs_torch), Min(vs_torch), Max(vs_torch),
                Median(vs_torch) >= 1 ? "met" : "NOT met");
  } else {
    std::printf("  torch eager: no figure: %s\n", f.torch_note.c_str());
  }
  std::printf("  loss after the last timed step: tfd %.4f (SGD 0.001, N(0,1) weights), hand %.4f\n",
              f.tfd_loss, f.hand_loss);

  if (f.traced == 0) return;
  std::printf(
      "\nWhere tfd's step goes: %ld traced steps, us per step by op (the executor's trace: a\n"
      "kernel's context, Compute and output hand-over), largest first.\n",
      f.traced);
  std::vector<std::pair<std::string, OpTime>> ops(f.by_op.begin(), f.by_op.end());
  std::sort(ops.begin(), ops.end(),
            [](const auto& x, const auto& y) { return x.second.micros > y.second.micros; });
  double total = 0;
  for (const auto& [op, t] : ops) total += t.micros;
  const double n = static_cast<double>(f.traced);
  for (const auto& [op, t] : ops) {
    if (t.micros / n < 1.0) continue;  // the rest is summed below
    std::printf("  %-32s %8.1f us  %5.1f%%  (%.0f per step)\n", op.c_str(), t.micros / n,
                100 * t.micros / total, static_cast<double>(t.runs) / n);
  }
  double small = 0;
  int small_ops = 0;
  for (const auto& [op, t] : ops) {
    if (t.micros / n < 1.0) small += t.micros, ++small_ops;
  }
  std::printf("  %-32s %8.1f us\n", (std::to_string(small_ops) + " ops under 1 us each").c_str(),
              small / n);
  const double wall = Median(f.traced_seconds) * 1e6;
  std::printf("  %-32s %8.1f us\n", "all kernels", total / n);
  // The hand-written step reads no input: its 50 batches are made before
  // it starts. tfd's step reads each batch (IdxNextBatch: conversion of
  // uint8 pixels, one-hot labels), on the critical path until the input is
  // prefetched.
  const auto input = f.by_op.find("IdxNextBatch");
  const double input_us = input == f.by_op.end() ? 0 : input->second.micros / n;
  const double hand_us = Median(hand) > 0 ? 1e6 / Median(hand) : 0;
  std::printf("  %-32s %8.1f us; the hand-written step: %.1f us (%.2f of it)\n",
              "kernels but the input's", total / n - input_us, hand_us,
              total / n - input_us > 0 ? hand_us / (total / n - input_us) : 0);
  std::printf("  %-32s %8.1f us (median traced step %.1f us)\n", "outside kernels",
              wall - total / n, wall);
  std::fflush(stdout);
}

void PrintKernelBenchFooter() {
  std::printf("\nload average after: %s\n", ProcLine("/proc/loadavg").c_str());
}

void AddKernelFigures(const std::string& table, const std::vector<KernelFigures>& figures,
                      FiguresJson& out) {
  const auto micros = [](std::vector<double> seconds) {
    for (double& s : seconds) s *= 1e6;
    return seconds;
  };
  for (const KernelFigures& f : figures) {
    const std::string row = f.op + " " + f.shapes + ", " + f.role;
    out.AddSamples(table, row, "pace", "Eigen's time / tfd's", f.times.Ratios());
    out.AddSamples(table, row, "tfd", "us", micros(f.times.a));
    out.AddSamples(table, row, "hand-written Eigen", "us", micros(f.times.b));
  }
}

void AddStepFigures(const StepFigures& f, FiguresJson& out) {
  const std::string row = "classic step, one CPU";
  out.AddSamples("classic step", row, "tfd", "steps/s", Rates(f.times.a));
  out.AddSamples("classic step", row, "hand-written Eigen", "steps/s", Rates(f.times.b));
  out.AddSamples("classic step", row, "torch eager", "steps/s", f.torch_rates);
}

}  // namespace tfd::bench
