#include "bench/train_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "bench/stats.h"
#include "common/cpu_split.h"
#include "kernels/gpu/gpu_device.h"

namespace tfd::bench {
namespace {

// The model measured, for the report's heading.
const char* ModelLine(examples::MnistModel model) {
  switch (model) {
    case examples::MnistModel::kLarge:
      return "large MNIST model (784-2048-2048-10 ReLU, 5.8 M parameters over 2 ps tasks, batch "
             "100, SGD)";
    case examples::MnistModel::kDeep:
      return "Deep MNIST convnet (conv 5x5x32, pool, conv 5x5x64, pool, FC 1024, dropout, FC 10; "
             "3.3 M parameters, batch 50, Adam 1e-4)";
    case examples::MnistModel::kStrong:
      return "strong MNIST model (784-256-10 ReLU, batch 100, Adam)";
    case examples::MnistModel::kClassic:
      break;
  }
  return "classic MNIST model (784-100-10 sigmoid, batch 100, SGD)";
}

// The table of --json's figures (bench/figures_json.h).
std::string ModelTable(examples::MnistModel model) {
  switch (model) {
    case examples::MnistModel::kLarge:
      return "large";
    case examples::MnistModel::kDeep:
      return "deep";
    case examples::MnistModel::kStrong:
      return "strong";
    case examples::MnistModel::kClassic:
      break;
  }
  return "classic";
}

void PrintRate(const std::string& what, const std::vector<double>& rates, double baseline) {
  const double median = Median(rates);
  const auto [lo, hi] = std::minmax_element(rates.begin(), rates.end());
  std::printf("  %-44s %8.1f %8.1f %8.1f %8.2f %7.2f\n", what.c_str(), median, *lo, *hi,
              median > 0 ? 1e3 / median : 0, baseline > 0 ? median / baseline : 0);
}

void PrintPhases(const std::string& what, const std::vector<StepPhases>& samples) {
  const StepPhases p = MedianPhases(samples);
  std::printf("  %-22s %6.2f %8.2f %7.2f %7.2f %6.2f %7.2f | %7.2f %7.2f | %3.0f+%-2.0f %3.0f+%-2.0f\n",
              what.c_str(), p.total, p.dispatch, p.params_in, p.compute, p.apply, p.completion,
              p.worker_kernels, p.ps_kernels, p.worker_recvs, p.worker_control_recvs, p.ps_recvs,
              p.ps_control_recvs);
}

void PrintCounters(const std::string& what, const TrainFigures& f) {
  const std::vector<ProcCounters>& per_step = f.per_step;
  std::printf("  %-22s", what.c_str());
  for (size_t i = 0; i < per_step.size() && i < f.processes.size(); ++i) {
    const ProcCounters& c = per_step[i];
    std::printf(" %s %.2f/%.2f/%.1f/%.0f", f.processes[i].c_str(), c.cpu_seconds * 1e3,
                c.runqueue_seconds * 1e3, c.context_switches, c.minor_faults);
    if (i + 1 < per_step.size()) std::printf(" |");
  }
  std::printf("\n");
}

// "1 ps (B) + 1 worker (A)", "2 ps (B, A) + 2 workers (A, B)": who runs
// where (the header says it with --cpus-per-task).
std::string Cluster(const TrainSetup& o, int workers, bool pinned = true) {
  pinned = pinned && o.cpus_per_task == 0;
  std::string s = o.ps_tasks() == 2 ? "2 ps" : "1 ps";
  if (pinned) s += o.ps_tasks() == 2 ? " (B, A)" : " (B)";
  s += workers == 2 ? " + 2 workers" : " + 1 worker";
  if (pinned) s += workers == 2 ? " (A, B)" : " (A)";
  return s;
}

// Where the one process runs second: "CPU A", or "worker:0's" (CPUs).
std::string OneProcessCpus(const TrainSetup& o) {
  return o.cpus_per_task == 0 ? "CPU A" : "worker:0's";
}

// "ps:0 0-7, worker:0 8-15, client 8-15 (worker:0's)"
std::string SplitLine(const CpuSplit& split) {
  std::string s;
  for (size_t t = 0; t < split.ps.size(); ++t) {
    s += "ps:" + std::to_string(t) + " " + FormatCpuList(split.ps[t]) + ", ";
  }
  for (size_t t = 0; t < split.workers.size(); ++t) {
    s += "worker:" + std::to_string(t) + " " + FormatCpuList(split.workers[t]) + ", ";
  }
  s += "client " + FormatCpuList(split.client);
  if (split.client_shares) s += " (worker:0's)";
  return s;
}

// The worker's step against the one process's on the same CPUs (issue 40),
// with the phases of the worker's traced steps.
void PrintOverlap(const TrainSetup& o, const TrainBenchFigures& f) {
  const double one = Median(f.local_one.rates), worker = Median(f.one_worker.rates);
  if (one <= 0 || worker <= 0) return;
  const double ratio = one / worker;  // ms/step over ms/step
  const StepPhases p = MedianPhases(f.one_worker.phases);
  const StepPhases alone = MedianPhases(f.local_one.phases);
  std::printf("  overlap: the worker's step %.2f ms is %.2fx the one process's on %s (%.2f ms)"
              " (target <= %.2f: %s);\n  traced: params in %.2f, compute %.2f, apply %.2f ms of"
              " %.2f (the one process's compute %.2f)\n",
              1e3 / worker, ratio, o.cpus_per_task == 0 ? "CPU A" : "worker:0's CPUs", 1e3 / one, kOverlapTarget,
              ratio <= kOverlapTarget ? "met" : "NOT met", p.params_in, p.compute, p.apply,
              p.total, alone.compute);
}

void PrintDaemons(const char* what, const TrainFigures& f) {
  if (f.daemons.empty()) return;
  std::printf("  %s:", what);
  for (const std::string& d : f.daemons) std::printf("  %s;", d.c_str());
  std::printf("\n");
}

void PrintFloor(const TrainSetup& o, const RawPsFigures& f, double tfd_ratio) {
  const double alone = Median(f.local);
  std::printf("  the floor: the step hand-written in Eigen, its ps a raw TCP socket (bench/raw_ps.h;\n"
              "  ratio: against that step alone on CPU A)\n");
  PrintRate("hand-written step alone, CPU A", f.local, alone);
  PrintRate("raw " + Cluster(o, 1), f.one_worker, alone);
  if (!f.two_workers.empty()) PrintRate("raw " + Cluster(o, 2) + ", aggregate", f.two_workers, alone);
  const double floor_ratio = alone > 0 ? Median(f.one_worker) / alone : 0;
  std::printf("  1 ps + 1 worker: the floor reaches %.2f of its one process, tfd %.2f of its own "
              "(%.0f%% of the floor's share)\n",
              floor_ratio, tfd_ratio, floor_ratio > 0 ? 100 * tfd_ratio / floor_ratio : 0);
}

}  // namespace

void PrintPlacement(const TrainSetup& o) {
  std::string device;
  if (o.worker_gpu) {
    device = "; workers and the one process compute on /device:GPU:0 (soft placement), the ps "
             "on its CPU";
    if (gpu::GpuDevices().empty()) {
      device += " [no GPU here (" + gpu::GpuUnavailableReason() + "): all on the CPU]";
    } else {
      device += " [" + gpu::GpuDevices()[0]->description() + "]";
    }
  }
  if (o.cpus_per_task == 0) {
    std::printf(
        "pinning: one process on all allowed CPUs, then on A = CPU %d; cluster: worker:0 on A, "
        "ps:0 and this client on B = CPU %d, worker:1 on B; 'unpinned': no affinity at all%s%s\n",
        o.cpu_a, o.cpu_b, o.cpu_a == o.cpu_b ? "  [one CPU only: everything shares it]" : "",
        device.c_str());
    return;
  }
  std::printf("placement (--cpus-per-task %s) over the allowed CPUs %s: one process on all of "
              "them, then on worker:0's%s\n",
              o.cpus_per_task == kEvenCpus ? "even" : std::to_string(o.cpus_per_task).c_str(),
              FormatCpuList(o.cpus).c_str(), device.c_str());
  for (int workers = 1; workers <= (o.two_workers ? 2 : 1); ++workers) {
    StatusOr<CpuSplit> split = PlaceTasks(o, workers);
    std::printf("  %d worker%s: %s\n", workers, workers == 1 ? "" : "s",
                split.ok() ? SplitLine(*split).c_str() : split.status().ToString().c_str());
  }
  std::printf("  'unpinned': no affinity at all; the raw ps floor (classic): worker on A = CPU "
              "%d, ps on B = CPU %d\n",
              o.cpu_a, o.cpu_b);
}

void PrintTrainReport(const TrainSetup& o, const TrainBenchFigures& f) {
  const double base = Median(f.local.rates);
  std::printf(
      "\nSteps/s of the %s, async,\n"
      "%d repetitions of %d steps after %d warm-up steps (ratio: against one process, all CPUs)\n",
      ModelLine(o.model), o.reps, o.steps, o.warmup);
  std::printf("  %-44s %8s %8s %8s %8s %7s\n", "", "median", "min", "max", "ms/step", "ratio");
  PrintRate("1 process, LocalSession, all CPUs", f.local.rates, base);
  const std::string where = o.cpus_per_task == 0 ? "CPU A only" : "worker:0's CPUs";
  PrintRate("1 process, LocalSession, " + where, f.local_one.rates, base);
  PrintRate(Cluster(o, 1), f.one_worker.rates, base);
  if (f.one_worker_unpinned) {
    PrintRate(Cluster(o, 1, false) + ", unpinned", f.one_worker_unpinned->rates, base);
  }
  if (f.one_worker_hosted) {
    PrintRate(Cluster(o, 1) + " in this process", f.one_worker_hosted->rates, base);
  }
  if (f.one_worker_trainer) {
    PrintRate(Cluster(o, 1, false) + ", unp., bench loop", f.one_worker_trainer->bench_loop_rates,
              base);
    PrintRate(Cluster(o, 1, false) + ", unp., tfctl loop", f.one_worker_trainer->rates, base);
    const double bench = Median(f.one_worker_trainer->bench_loop_rates);
    const double loop = bench > 0 ? Median(f.one_worker_trainer->rates) / bench : 0;
    std::printf("    tfctl train's loop with hooks at %.3f of the bench's loop, alternated on the "
                "same daemons (target %.2f: %s)\n",
                loop, kTrainerLoopTarget, loop >= kTrainerLoopTarget ? "met" : "NOT met");
  }
  if (f.two_workers) {
    PrintRate(Cluster(o, 2) + ", aggregate", f.two_workers->rates, base);
    std::vector<double> w0, w1;
    for (size_t i = 0; i + 1 < f.two_workers->worker_rates.size(); i += 2) {
      w0.push_back(f.two_workers->worker_rates[i]);
      w1.push_back(f.two_workers->worker_rates[i + 1]);
    }
    std::printf("    each replica's median: worker:0 %.1f, worker:1 %.1f steps/s\n", Median(w0),
                Median(w1));
  }
  if (f.two_workers_hosted) {
    PrintRate(Cluster(o, 2) + " in this process, aggr.", f.two_workers_hosted->rates, base);
  }
  const double ratio = base > 0 ? Median(f.one_worker.rates) / base : 0;
  if (o.model == examples::MnistModel::kClassic) {
    std::printf("  target: 1 ps + 1 worker at %.0f%% of one process or better: %s (%.2f)\n",
                kTrainTarget * 100, ratio >= kTrainTarget ? "met" : "NOT met", ratio);
    if (f.one_worker_hosted) {
      const double hosted = base > 0 ? Median(f.one_worker_hosted->rates) / base : 0;
      std::printf("          the same with the worker in the client's process: %s (%.2f)\n",
                  hosted >= kTrainTarget ? "met" : "NOT met", hosted);
    }
  }
  PrintOverlap(o, f);
  if (f.floor) PrintFloor(o, *f.floor, ratio);
  const StepPhases moving = MedianPhases(f.one_worker.phases);
  std::printf("  moved per step by worker:0 (pushed + received over the data plane): %.1f MB;\n"
              "  params in + apply (parameters arriving, gradients arriving and applied): "
              "%.2f of %.2f ms, %.0f%% of the step\n",
              f.one_worker.bytes_per_step / 1e6, moving.params_in + moving.apply, moving.total,
              moving.total > 0 ? 100 * (moving.params_in + moving.apply) / moving.total : 0);
  std::printf("  loss after the last step: one process %.3f, 1 worker %.3f", f.local.last_loss,
              f.one_worker.last_loss);
  if (f.one_worker_hosted) std::printf(" (in the client: %.3f)", f.one_worker_hosted->last_loss);
  if (f.two_workers) std::printf(", 2 workers %.3f", f.two_workers->last_loss);
  if (f.two_workers_hosted) std::printf(" (in the client: %.3f)", f.two_workers_hosted->last_loss);
  std::printf("\n");

  std::printf(
      "\nWhere a step's time goes: median of %d traced steps (ms). dispatch: client sends -> "
      "first kernel;\nparams in: -> the worker holds the last parameter; compute: -> the worker "
      "sent the last gradient;\napply: -> the last kernel (ps) ends; completion: -> the client "
      "has the reply. Kernel sums may overlap;\nrecvs: cross-task receives per step, tensors + control edges (each pushed by its sender).\n",
      o.traced);
  std::printf("  %-22s %6s %8s %7s %7s %6s %7s | %7s %7s | %6s %6s\n", "", "total", "dispatch",
              "params", "compute", "apply", "reply", "worker", "ps", "worker", "ps");
  std::printf("  %-22s %6s %8s %7s %7s %6s %7s | %7s %7s | %6s %6s\n", "", "", "", "in", "", "", "",
              "kernels", "kernels", "recvs", "recvs");
  PrintPhases("1 process, all CPUs", f.local.phases);
  PrintPhases("1 process, " + OneProcessCpus(o), f.local_one.phases);
  PrintPhases(o.ps_tasks() == 2 ? "2 ps + 1 worker" : "1 ps + 1 worker", f.one_worker.phases);
  if (f.one_worker_unpinned) PrintPhases("   unpinned", f.one_worker_unpinned->phases);
  if (f.one_worker_hosted) PrintPhases("   worker in client", f.one_worker_hosted->phases);

  std::printf(
      "\nPer timed step, from /proc: CPU ms / run-queue wait ms / context switches / minor faults,"
      " per process\n(2 workers: per step of the aggregate, so each worker's own step costs twice"
      " its figure)\n");
  PrintCounters("1 process, all CPUs", f.local);
  PrintCounters("1 process, " + OneProcessCpus(o), f.local_one);
  PrintCounters("1 worker", f.one_worker);
  if (f.one_worker_unpinned) PrintCounters("1 worker, unpinned", *f.one_worker_unpinned);
  if (f.one_worker_hosted) PrintCounters("1 worker in client", *f.one_worker_hosted);
  if (f.two_workers) PrintCounters("2 workers", *f.two_workers);
  if (f.two_workers_hosted) PrintCounters("2 workers in client", *f.two_workers_hosted);

  std::printf("\nThe daemons as /proc showed them once started (their CPUs, their compute "
              "threads):\n");
  PrintDaemons("1 worker", f.one_worker);
  if (f.one_worker_hosted) PrintDaemons("1 worker in client", *f.one_worker_hosted);
  if (f.two_workers) PrintDaemons("2 workers", *f.two_workers);
  if (f.two_workers_hosted) PrintDaemons("2 workers in client", *f.two_workers_hosted);
}

void PrintRssReport(const RssFigures& f) {
  std::printf("\nResident memory (MiB) of 1 ps + 1 worker over %lld steps of the model, after "
              "the warm-up:\n  %10s", static_cast<long long>(f.steps.back()), "steps");
  for (const std::string& p : f.processes) std::printf(" %10s", p.c_str());
  std::printf("\n");
  for (size_t i = 0; i < f.steps.size(); ++i) {
    std::printf("  %10lld", static_cast<long long>(f.steps[i]));
    for (size_t bytes : f.rss[i]) std::printf(" %10.1f", bytes / 1048576.0);
    std::printf("\n");
  }
  std::printf("  change, first sample to last (target: tfd within %.0f %%):\n",
              kRssFlatBound * 100);
  for (size_t p = 0; p < f.processes.size(); ++p) {
    const double first = static_cast<double>(f.rss.front()[p]);
    const double last = static_cast<double>(f.rss.back()[p]);
    const double change = first > 0 ? (last - first) / first : 0;
    const bool tfd = f.processes[p] != "client";
    std::printf("    %-10s %+6.1f %%%s\n", f.processes[p].c_str(), change * 100,
                !tfd ? "" : std::abs(change) <= kRssFlatBound ? "  met" : "  MISSED");
  }
}

void AddTrainFigures(const TrainSetup& o, const TrainBenchFigures& f, FiguresJson& out) {
  const std::string table = ModelTable(o.model);
  const std::string one = o.ps_tasks() == 2 ? "2 ps + 1 worker" : "1 ps + 1 worker";
  const std::string two =
      (o.ps_tasks() == 2 ? "2 ps" : "1 ps") + std::string(" + 2 workers, aggregate");
  auto add = [&](const std::string& row, const std::string& series, const std::vector<double>& r) {
    out.AddSamples(table, row, series, "steps/s", r);
  };
  add("one process, all CPUs", "tfd", f.local.rates);
  add(o.cpus_per_task == 0 ? "one process, CPU A" : "one process, worker:0's CPUs", "tfd",
      f.local_one.rates);
  add(one, "tfd", f.one_worker.rates);
  if (f.one_worker_unpinned) add(one, "tfd, unpinned", f.one_worker_unpinned->rates);
  if (f.one_worker_hosted) add(one, "tfd, worker in the trainer", f.one_worker_hosted->rates);
  if (f.one_worker_trainer) {
    add(one, "tfd, unpinned, bench loop beside tfctl's", f.one_worker_trainer->bench_loop_rates);
    add(one, "tfd, unpinned, tfctl train's loop", f.one_worker_trainer->rates);
  }
  if (f.two_workers) add(two, "tfd", f.two_workers->rates);
  if (f.two_workers_hosted) add(two, "tfd, workers in their trainers", f.two_workers_hosted->rates);
  if (f.floor) {
    add("one process, CPU A", "hand-written Eigen", f.floor->local);
    add(one, "the floor (raw ps)", f.floor->one_worker);
    add(two, "the floor (raw ps)", f.floor->two_workers);
  }
}

}  // namespace tfd::bench
