#include "bench/train_report.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "bench/stats.h"

namespace tfd::bench {
namespace {

void PrintRate(const std::string& what, const std::vector<double>& rates, double baseline) {
  const double median = Median(rates);
  const auto [lo, hi] = std::minmax_element(rates.begin(), rates.end());
  std::printf("  %-40s %8.1f %8.1f %8.1f %8.2f %7.2f\n", what.c_str(), median, *lo, *hi,
              median > 0 ? 1e3 / median : 0, baseline > 0 ? median / baseline : 0);
}

void PrintPhases(const std::string& what, const std::vector<StepPhases>& samples) {
  const StepPhases p = MedianPhases(samples);
  std::printf("  %-22s %6.2f %8.2f %7.2f %7.2f %6.2f %7.2f | %7.2f %7.2f | %3.0f+%-2.0f %3.0f+%-2.0f\n",
              what.c_str(), p.total, p.dispatch, p.params_in, p.compute, p.apply, p.completion,
              p.worker_kernels, p.ps_kernels, p.worker_recvs, p.worker_control_recvs, p.ps_recvs,
              p.ps_control_recvs);
}

void PrintCounters(const std::string& what, const std::vector<const char*>& names,
                   const std::vector<ProcCounters>& per_step) {
  std::printf("  %-22s", what.c_str());
  for (size_t i = 0; i < per_step.size() && i < names.size(); ++i) {
    const ProcCounters& c = per_step[i];
    std::printf(" %s %.2f/%.2f/%.1f/%.0f", names[i], c.cpu_seconds * 1e3,
                c.runqueue_seconds * 1e3, c.context_switches, c.minor_faults);
    if (i + 1 < per_step.size()) std::printf(" |");
  }
  std::printf("\n");
}

}  // namespace

void PrintTrainReport(const TrainSetup& o, const TrainBenchFigures& f) {
  const double base = Median(f.local.rates);
  std::printf(
      "\nSteps/s of the classic MNIST model (784-100-10 sigmoid, batch 100, SGD 0.001, async),\n"
      "%d repetitions of %d steps after %d warm-up steps (ratio: against one process, all CPUs)\n",
      o.reps, o.steps, o.warmup);
  std::printf("  %-40s %8s %8s %8s %8s %7s\n", "", "median", "min", "max", "ms/step", "ratio");
  PrintRate("1 process, LocalSession, all CPUs", f.local.rates, base);
  PrintRate("1 process, LocalSession, CPU A only", f.local_one.rates, base);
  PrintRate("1 ps (B) + 1 worker (A)", f.one_worker.rates, base);
  if (f.one_worker_unpinned) {
    PrintRate("1 ps + 1 worker, unpinned", f.one_worker_unpinned->rates, base);
  }
  if (f.two_workers) {
    PrintRate("1 ps (B) + 2 workers (A, B), aggregate", f.two_workers->rates, base);
    std::vector<double> w0, w1;
    for (size_t i = 0; i + 1 < f.two_workers->worker_rates.size(); i += 2) {
      w0.push_back(f.two_workers->worker_rates[i]);
      w1.push_back(f.two_workers->worker_rates[i + 1]);
    }
    std::printf("    each replica's median: worker:0 %.1f, worker:1 %.1f steps/s\n", Median(w0),
                Median(w1));
  }
  const double ratio = base > 0 ? Median(f.one_worker.rates) / base : 0;
  std::printf("  target: 1 ps + 1 worker at %.0f%% of one process or better: %s (%.2f)\n",
              kTrainTarget * 100, ratio >= kTrainTarget ? "met" : "NOT met", ratio);
  std::printf("  loss after the last step: one process %.3f, 1 worker %.3f", f.local.last_loss,
              f.one_worker.last_loss);
  if (f.two_workers) std::printf(", 2 workers %.3f", f.two_workers->last_loss);
  std::printf("\n");

  std::printf(
      "\nWhere a step's time goes: median of %d traced steps (ms). dispatch: client sends -> "
      "first kernel;\nparams in: -> the worker holds the last parameter; compute: -> the worker "
      "sent the last gradient;\napply: -> the last kernel (ps) ends; completion: -> the client "
      "has the reply. Kernel sums may overlap;\nrecvs: cross-task receives per step, tensors + control edges (one recvTensor RPC each).\n",
      o.traced);
  std::printf("  %-22s %6s %8s %7s %7s %6s %7s | %7s %7s | %6s %6s\n", "", "total", "dispatch",
              "params", "compute", "apply", "reply", "worker", "ps", "worker", "ps");
  std::printf("  %-22s %6s %8s %7s %7s %6s %7s | %7s %7s | %6s %6s\n", "", "", "", "in", "", "", "",
              "kernels", "kernels", "recvs", "recvs");
  PrintPhases("1 process, all CPUs", f.local.phases);
  PrintPhases("1 process, CPU A", f.local_one.phases);
  PrintPhases("1 ps + 1 worker", f.one_worker.phases);
  if (f.one_worker_unpinned) PrintPhases("1 ps + 1 w., unpinned", f.one_worker_unpinned->phases);

  std::printf(
      "\nPer timed step, from /proc: CPU ms / run-queue wait ms / context switches / minor faults,"
      " per process\n(2 workers: per step of the aggregate, so each worker's own step costs twice"
      " its figure)\n");
  PrintCounters("1 process, all CPUs", {"self"}, f.local.per_step);
  PrintCounters("1 process, CPU A", {"self"}, f.local_one.per_step);
  PrintCounters("1 ps + 1 worker", {"client", "ps:0", "worker:0"}, f.one_worker.per_step);
  if (f.one_worker_unpinned) {
    PrintCounters("1 ps + 1 w., unpinned", {"client", "ps:0", "worker:0"},
                  f.one_worker_unpinned->per_step);
  }
  if (f.two_workers) {
    PrintCounters("1 ps + 2 workers", {"client", "ps:0", "worker:0", "worker:1"},
                  f.two_workers->per_step);
  }
}

}  // namespace tfd::bench
