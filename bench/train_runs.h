// What train_bench measures: steps per second of an MNIST model of
// examples/mnist (the classic one, the large one over two ps tasks, or the
// Deep MNIST convnet; asynchronous, each at its own batch size) in one process through a LocalSession, and on
// real tfd daemons through daemon/client/client.h, with the same graph and
// the same generated data.
//
//   TFD_ASSIGN_OR_RETURN(TrainFigures local, MeasureInProcess(setup, setup.cpus));
//   TFD_ASSIGN_OR_RETURN(TrainFigures remote, MeasureOneWorker(setup));
//
// Each measurement runs "init" once, `warmup` steps, then `reps` timed
// repetitions of `steps` steps (target "train", fetch "summaries/loss"),
// then `traced` traced steps for the phases (bench/step_phases.h).
//
// Thread-safety: the benchmark's main thread, which these functions pin
// (and so every thread it starts afterwards). MeasureTwoWorkers starts two
// client threads of its own and joins them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/cpu_split.h"
#include "bench/proc_counters.h"
#include "bench/step_phases.h"
#include "common/status.h"
#include "examples/mnist/mnist_model.h"

namespace tfd::bench {

struct TrainSetup {
  std::string tfd;       // the daemon binary
  std::string data_dir;  // holds the four IDX files (bench/mnist_files.h)
  int steps = 2000;      // per timed repetition
  int warmup = 50;
  int reps = 5;
  int traced = 100;
  bool two_workers = true;
  // kClassic or kDeep on one ps task, or kLarge with its parameters over two.
  examples::MnistModel model = examples::MnistModel::kClassic;
  int ps_tasks() const { return model == examples::MnistModel::kLarge ? 2 : 1; }
  bool unpinned = true;  // also 1 ps + 1 worker left to the scheduler
  bool hosted = true;    // also 1 ps + 1 worker with the worker in this process
  bool prefetch = true;  // the training input made ahead of each step
  int64_t rss_steps = 0;  // --rss-steps: instead of the rates, MeasureRss over this many
  std::string json_path;  // --json: also write the rates there (bench/figures_json.h)
  // --cpus-per-task 0: the worker (and the single process when pinned to
  // one CPU) on A; the ps and the client on B.
  int cpu_a = -1, cpu_b = -1;
  std::vector<int> cpus;  // every CPU allowed to the benchmark
  // --cpus-per-task: 0 for A and B above; N > 0 or kEvenCpus for a disjoint
  // set of CPUs per task (PlaceTasks).
  int cpus_per_task = 0;
  // --worker-device gpu: the workers (and the one process) compute on
  // /device:GPU:0, the daemons run with --allow-soft-placement.
  bool worker_gpu = false;
};

// Where the pinned runs of `workers` workers put each process: with
// --cpus-per-task 0, ps:0 on B, ps:1 on A, worker:0 on A, worker:1 on B, the
// client on B; otherwise SplitCpusByRole over setup.cpus. The one-process run
// "on the worker's CPUs" uses workers[0] of the 1-worker placement.
StatusOr<CpuSplit> PlaceTasks(const TrainSetup& setup, int workers);

struct TrainFigures {
  std::vector<double> rates;           // steps/s, one per repetition (aggregate for 2 workers)
  std::vector<double> worker_rates;    // 2 workers: each worker's steps/s, per repetition
  std::vector<ProcCounters> per_step;  // per process, over the timed steps
  std::vector<std::string> processes;  // per_step's processes: "self", or "client", "ps:0", ...
  std::vector<StepPhases> phases;      // one per traced step (none for 2 workers)
  double last_loss = 0;
  // Tensor bytes worker:0 pushed and received per step over the data plane
  // (1 worker only; 0 in one process).
  double bytes_per_step = 0;
  // MeasureTrainerLoop: the bench's own loop's steps/s, one per
  // repetition, each taken just before the trainer's of `rates`.
  std::vector<double> bench_loop_rates;
  // Each daemon's CPUs and compute threads as /proc shows them once
  // started: "ps:0: CPUs 0-7, 8 compute threads" (BenchCluster::Placement).
  std::vector<std::string> daemons;
};

// One process on `cpus`, with a compute pool of one thread per CPU of
// `cpus` as `tfctl run` has (on the GPU with --worker-device gpu, soft
// placement on). per_step: this process.
StatusOr<TrainFigures> MeasureInProcess(const TrainSetup& setup, const std::vector<int>& cpus);

// The ps task(s) + 1 worker, placed by PlaceTasks; the client (this
// process) talks to the worker, which is the master, as `tfctl train`
// does. per_step: this process, each ps task, worker:0. Unpinned, every
// process may use every CPU.
StatusOr<TrainFigures> MeasureOneWorker(const TrainSetup& setup, bool pinned);

// MeasureOneWorker's pinned cluster with worker:0 hosted in this process
// (daemon/task_host.h) on worker:0's CPUs, as a program that trains beside its own worker
// runs it: the client's calls reach the master without a socket. per_step:
// this process (client and worker), each ps task.
StatusOr<TrainFigures> MeasureHostedWorker(const TrainSetup& setup);

// The unpinned 1 ps + 1 worker of MeasureOneWorker, trained by tfctl
// train's loop (daemon/client/training/trainer.h, with tfctl's default
// hooks: progress every 10 s, the default checkpoint policy, a stop on
// SIGINT/SIGTERM) instead of the bench's own: how much the loop with hooks
// costs. Each repetition runs `steps` steps with the bench's loop, then a
// Trainer run of as many, on the same daemons, so the two see the same
// machine; rates: the Trainer's (its steps over its seconds from the first
// step, as tfctl reports), bench_loop_rates: the bench loop's. Without the
// end's evaluation (it is after the timed steps). per_step, phases: none.
StatusOr<TrainFigures> MeasureTrainerLoop(const TrainSetup& setup);

// Resident memory over a long run: 1 ps + 1 worker (pinned as above) run
// `total_steps` steps after the warm-up, and every process's RSS is read
// `samples` times at even intervals (issue 12: flat within 5 % over 100,000
// steps of the classic model).
struct RssFigures {
  std::vector<std::string> processes;    // "client", "ps:0", ..., "worker:0"
  std::vector<int64_t> steps;            // when each sample was taken
  std::vector<std::vector<size_t>> rss;  // [sample][process], bytes
};
StatusOr<RssFigures> MeasureRss(const TrainSetup& setup, int64_t total_steps, int samples);

// The ps task(s) + 2 workers, placed by PlaceTasks, each driven by its own
// client thread (on the client's CPUs) at once; each worker reads its own
// shard. per_step (per step of either replica): this process, each ps
// task, worker:0, worker:1. `hosted`: each client thread hosts its worker
// in this process, on the worker's CPUs; per_step: this process, each ps
// task.
StatusOr<TrainFigures> MeasureTwoWorkers(const TrainSetup& setup, bool hosted);

}  // namespace tfd::bench
