// train_bench: steps per second of the classic MNIST model (examples/mnist:
// 784-100-10 sigmoid MLP, batch 100, SGD 0.001, asynchronous) in one
// process through a LocalSession, beside the same graph on a local cluster
// of 1 ps + 1 worker (and, unless --workers 1, 1 ps + 2 workers driven at
// once), in one run; with --model large, the 5.8 M-parameter model over 2
// ps tasks instead, or with --model deep the Deep MNIST convnet (batch 50,
// Adam 1e-4, on one ps task). The data is generated: IDX files of MNIST's sizes in a
// temporary directory, the daemons' --data-dir. For the classic model it
// also measures the floor: the same step hand-written in Eigen against a
// parameter server that is a raw TCP socket (bench/raw_ps.h), placed on the
// same CPUs. Today's figures: docs/performance.md, "Training".
//
// By default each task is pinned to one CPU (A or B); --cpus-per-task N
// gives every process of a measurement its own N CPUs instead (a big
// host), and --worker-device gpu has the workers compute on their GPU.
//
//   train_bench [--tfd PATH] [--steps 2000] [--reps 5] [--warmup 50]
//               [--traced 100] [--workers 2] [--unpinned 1] [--model classic|large|deep]
//               [--cpus 0,1] [--cpus-per-task 0|N|even] [--worker-device cpu|gpu]
//               [--json FILE]
//
// Exit status: 0 after printing the tables (a missed target is reported,
// not failed); 1 when a measurement could not be made; 2 for bad flags.
#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "common/heap_policy.h"
#include "common/subprocess.h"
#include "bench/bench_flags.h"
#include "bench/data_dir.h"
#include "bench/mnist_files.h"
#include "bench/proc_counters.h"
#include "bench/train_report.h"

#ifndef TFD_DEFAULT_PATH
#define TFD_DEFAULT_PATH "tfd"
#endif

namespace tfd::bench {
namespace {

StatusOr<int> ParseCpu(const std::string& flag, const std::string& value) {
  char* end = nullptr;
  const long v = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || v < 0 || v >= CPU_SETSIZE) {
    return errors::InvalidArgument(flag, " takes CPU numbers from 0 to ", CPU_SETSIZE - 1,
                                   ", not '", value, "'");
  }
  return static_cast<int>(v);
}

// --cpus A,B.
Status ParseCpuPair(const std::string& value, TrainSetup& o) {
  const size_t comma = value.find(',');
  if (comma == std::string::npos) {
    return errors::InvalidArgument("--cpus takes A,B, not '", value, "'");
  }
  TFD_ASSIGN_OR_RETURN(o.cpu_a, ParseCpu("--cpus", value.substr(0, comma)));
  TFD_ASSIGN_OR_RETURN(o.cpu_b, ParseCpu("--cpus", value.substr(comma + 1)));
  return OkStatus();
}

// --model and --cpus-per-task, read as text.
Status ApplyChoices(const std::string& model, const std::string& cpus_per_task, TrainSetup& o) {
  TFD_ASSIGN_OR_RETURN(o.model, examples::ParseMnistModel(model));
  if (cpus_per_task == "even") {
    o.cpus_per_task = kEvenCpus;
    return OkStatus();
  }
  char* end = nullptr;
  const long v = std::strtol(cpus_per_task.c_str(), &end, 10);
  if (cpus_per_task.empty() || *end != '\0' || v < 0 || v > CPU_SETSIZE) {
    return errors::InvalidArgument("--cpus-per-task takes 0, N (up to ", CPU_SETSIZE,
                                   ") or even, not '", cpus_per_task, "'");
  }
  o.cpus_per_task = static_cast<int>(v);
  return OkStatus();
}

// The command line into `o`; exits on --help or a bad flag (too few CPUs
// for the placement asked is one, found before anything runs).
void ParseFlags(int argc, char** argv, TrainSetup& o) {
  o.cpus = AllowedCpus();
  if (o.cpus.empty()) {
    std::fprintf(stderr, "train_bench: error: INTERNAL: no CPU is allowed to this process\n");
    std::exit(1);
  }
  o.cpu_a = o.cpus[0];
  o.cpu_b = o.cpus.size() > 1 ? o.cpus[1] : o.cpus[0];
  int workers = o.two_workers ? 2 : 1;
  std::string model = "classic", cpus_per_task = "0", worker_device = "cpu";
  BenchFlags flags("train_bench", "the MNIST models' steps/s in one process and on 1 ps + 1 and "
                                  "2 workers, beside a raw-TCP ps and the hand-written step");
  flags.TfdBinary(TFD_DEFAULT_PATH, &o.tfd)
      .Int("steps", 1, 10000000, "timed steps per repetition", &o.steps)
      .Int("reps", 1, 1000, "timed repetitions per configuration", &o.reps)
      .Int("warmup", 0, 1000000, "steps before the timed ones", &o.warmup)
      .Int("traced", 1, 100000, "traced steps after them, for the phases", &o.traced)
      .Int("workers", 1, 2, "2 adds the 1 ps + 2 workers run", &workers)
      .Bit("unpinned", "1 adds 1 ps + 1 worker with no CPU pinning, and the same trained by "
           "tfctl train's loop with hooks beside the bench's own loop", &o.unpinned)
      .Bit("hosted", "1 adds the runs with the workers hosted in the bench's own process, the "
           "clients' calls reaching their masters without a socket", &o.hosted)
      .Choice("model", {"classic", "large", "deep"}, "large: 784-2048-2048-10 over 2 ps tasks; "
              "deep: the Deep MNIST convnet of examples/mnist, batch 50, Adam; give either far "
              "fewer --steps, e.g. --steps 50 --reps 3 --warmup 5 --traced 10", &model)
      .Custom("cpus", "A,B", "A (the worker) and B (the ps and the client)",
              [&o](const std::string& v) { return ParseCpuPair(v, o); })
      .ShownDefault("the first two allowed")
      .Text("cpus-per-task", "0|N|even", "0: each task on one CPU, A or B; N: every process of "
            "a measurement on N CPUs of its own, taken from the allowed ones in the order ps:0, "
            "ps:1, worker:0, worker:1, then 1 for the client if one is left (else it shares "
            "worker:0's); even: the allowed CPUs split evenly over the tasks. The one process "
            "then runs on all CPUs and on worker:0's; tfd sizes its compute threads by its CPUs",
            &cpus_per_task)
      .Choice("worker-device", {"cpu", "gpu"}, "gpu: the workers and the one process compute "
              "on /device:GPU:0, the ps on its CPU; the daemons get --allow-soft-placement",
              &worker_device)
      .Int("rss-steps", 10, 100000000, "instead of the rates: 1 ps + 1 worker run N steps, and "
           "each process's resident memory is read ten times on the way (e.g. 100000)",
           &o.rss_steps)
      .ShownDefault("off")
      .Bit("prefetch", "0 builds the model without the input prefetch, to measure it",
           &o.prefetch)
      .Json(&o.json_path);
  flags.ParseOrExit(argc, argv);
  o.two_workers = workers == 2;
  o.worker_gpu = worker_device == "gpu";
  Status placed = ApplyChoices(model, cpus_per_task, o);
  if (placed.ok()) placed = PlaceTasks(o, 1).status();
  if (placed.ok() && o.two_workers && o.rss_steps == 0) placed = PlaceTasks(o, 2).status();
  if (!placed.ok()) {
    std::fprintf(stderr, "train_bench: error: %s\n", placed.ToString().c_str());
    std::exit(2);
  }
}

Status Measure(TrainSetup& o, TrainBenchFigures& f) {
  DataDir data("tfd-train-bench");
  if (data.path().empty()) return errors::Internal("cannot make a directory under /tmp");
  o.data_dir = data.path();
  TFD_RETURN_IF_ERROR(WriteMnistSizedFiles(o.data_dir));
  if (o.rss_steps > 0) {
    TFD_ASSIGN_OR_RETURN(RssFigures rss, MeasureRss(o, o.rss_steps, 10));
    PrintRssReport(rss);
    return OkStatus();
  }
  auto step = [](const char* what, StatusOr<TrainFigures> r, TrainFigures* out) -> Status {
    if (!r.ok()) return r.status().WithContext(what);
    *out = std::move(r).value();
    std::fprintf(stderr, "train_bench: %s done\n", what);
    return OkStatus();
  };
  TFD_RETURN_IF_ERROR(step("one process, all CPUs", MeasureInProcess(o, o.cpus), &f.local));
  TFD_ASSIGN_OR_RETURN(const CpuSplit one, PlaceTasks(o, 1));
  TFD_RETURN_IF_ERROR(step("one process, worker:0's CPUs", MeasureInProcess(o, one.workers[0]),
                           &f.local_one));
  TFD_RETURN_IF_ERROR(step("1 ps + 1 worker", MeasureOneWorker(o, true), &f.one_worker));
  if (o.unpinned) {
    f.one_worker_unpinned.emplace();
    TFD_RETURN_IF_ERROR(step("1 ps + 1 worker, unpinned", MeasureOneWorker(o, false),
                             &*f.one_worker_unpinned));
    f.one_worker_trainer.emplace();
    TFD_RETURN_IF_ERROR(step("1 ps + 1 worker, unpinned, tfctl train's loop and the bench's",
                             MeasureTrainerLoop(o), &*f.one_worker_trainer));
  }
  if (o.hosted) {
    f.one_worker_hosted.emplace();
    TFD_RETURN_IF_ERROR(step("1 ps + 1 worker, worker in this process", MeasureHostedWorker(o),
                             &*f.one_worker_hosted));
  }
  if (o.two_workers) {
    f.two_workers.emplace();
    TFD_RETURN_IF_ERROR(step("1 ps + 2 workers", MeasureTwoWorkers(o, false), &*f.two_workers));
    if (o.hosted) {
      f.two_workers_hosted.emplace();
      TFD_RETURN_IF_ERROR(step("1 ps + 2 workers, workers in this process",
                               MeasureTwoWorkers(o, true), &*f.two_workers_hosted));
    }
  }
  if (o.model == examples::MnistModel::kClassic) {
    StatusOr<RawPsFigures> floor = MeasureRawPs(o);
    if (!floor.ok()) return floor.status().WithContext("the raw ps floor");
    f.floor = std::move(floor).value();
    std::fprintf(stderr, "train_bench: the raw ps floor done\n");
  }
  return OkStatus();
}

int Main(int argc, char** argv) {
  KeepHeapForSteps();  // as tfctl does: the one-process and hosted runs stand for it
  TrainSetup o;
  ParseFlags(argc, argv, o);
  std::printf("train_bench: %u CPUs (%s); kernel %s\n", std::thread::hardware_concurrency(),
              ProcLine("/proc/cpuinfo", "model name").c_str(),
              ProcLine("/proc/sys/kernel/osrelease").c_str());
  PrintPlacement(o);
  std::printf("tfd: %s\nload average before: %s\n", o.tfd.c_str(),
              ProcLine("/proc/loadavg").c_str());
  std::fflush(stdout);
  FiguresJson json("train_bench", argc, argv);  // records the load before
  TrainBenchFigures f;
  if (Status s = Measure(o, f); !s.ok()) {
    std::fprintf(stderr, "train_bench: error: %s\n", s.ToString().c_str());
    return 1;
  }
  if (o.rss_steps == 0) PrintTrainReport(o, f);
  std::printf("load average after: %s\n", ProcLine("/proc/loadavg").c_str());
  if (o.rss_steps == 0) AddTrainFigures(o, f, json);
  if (Status s = json.Write(o.json_path); !s.ok()) {
    std::fprintf(stderr, "train_bench: error: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace tfd::bench

int main(int argc, char** argv) { return tfd::bench::Main(argc, argv); }
