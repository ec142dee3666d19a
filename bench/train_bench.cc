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
#include "bench/data_dir.h"
#include "bench/mnist_files.h"
#include "bench/proc_counters.h"
#include "bench/train_report.h"

#ifndef TFD_DEFAULT_PATH
#define TFD_DEFAULT_PATH "tfd"
#endif

namespace tfd::bench {
namespace {

constexpr const char* kUsage =
    "usage: train_bench [--tfd PATH] [--steps N] [--reps N] [--warmup N] [--traced N] "
    "[--workers 1|2] [--unpinned 0|1] [--model classic|large|deep] [--cpus A,B] [--rss-steps N]\n"
    "       [--prefetch 0|1] [--hosted 0|1] [--cpus-per-task 0|N|even] [--worker-device cpu|gpu]\n"
    "       [--json FILE]\n"
    "  --tfd      the tfd binary (default: $TFD, else the one built with this bench)\n"
    "  --steps    timed steps per repetition (default 2000)\n"
    "  --reps     timed repetitions per configuration (default 5)\n"
    "  --warmup   steps before the timed ones (default 50)\n"
    "  --traced   traced steps after them, for the phases (default 100)\n"
    "  --workers  2 adds the 1 ps + 2 workers run (default 2)\n"
    "  --unpinned 1 adds 1 ps + 1 worker with no CPU pinning (default 1), and the same\n"
    "             trained by tfctl train's loop with hooks beside the bench's own loop\n"
    "  --hosted   1 adds the runs with the workers hosted in the bench's own process, the\n"
    "             clients' calls reaching their masters without a socket (default 1)\n"
    "  --model    classic, or large (784-2048-2048-10 over 2 ps tasks; give it far fewer\n"
    "             --steps, e.g. --steps 50 --reps 3 --warmup 5 --traced 10), or deep (the Deep\n"
    "             MNIST convnet of examples/mnist, batch 50, Adam; likewise few --steps)\n"
    "  --cpus     A (the worker) and B (the ps and the client) (default: the first two allowed)\n"
    "  --cpus-per-task  0: each task on one CPU, A or B (default); N: every process of a\n"
    "             measurement on N CPUs of its own, taken from the allowed ones in the order\n"
    "             ps:0, ps:1, worker:0, worker:1, then 1 for the client if one is left (else\n"
    "             it shares worker:0's); even: the allowed CPUs split evenly over the tasks.\n"
    "             The one process then runs on all CPUs and on worker:0's; tfd sizes its\n"
    "             compute threads by its CPUs\n"
    "  --worker-device  gpu: the workers and the one process compute on /device:GPU:0, the ps\n"
    "             on its CPU; the daemons get --allow-soft-placement (default cpu)\n"
    "  --rss-steps instead of the rates: 1 ps + 1 worker run N steps, and each process's\n"
    "             resident memory is read ten times on the way (e.g. 100000)\n"
    "  --prefetch 0 builds the model without the input prefetch, to measure it (default 1)\n"
    "  --json     also write the steps/s to FILE as JSON (bench/figures_json.h)\n";

StatusOr<long> ParseCount(const std::string& flag, const std::string& value, long lo, long hi) {
  char* end = nullptr;
  const long v = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || v < lo || v > hi) {
    return errors::InvalidArgument(flag, " takes an integer in [", lo, ", ", hi, "], got '",
                                   value, "'");
  }
  return v;
}

StatusOr<TrainSetup> ParseFlags(int argc, char** argv) {
  TrainSetup o;
  const char* env = std::getenv("TFD");
  o.tfd = env != nullptr && *env != '\0' ? env : TFD_DEFAULT_PATH;
  o.cpus = AllowedCpus();
  if (o.cpus.empty()) return errors::Internal("no CPU is allowed to this process");
  o.cpu_a = o.cpus[0];
  o.cpu_b = o.cpus.size() > 1 ? o.cpus[1] : o.cpus[0];
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") return errors::Cancelled("help");
    if (i + 1 >= argc) return errors::InvalidArgument(flag, " needs a value");
    const std::string value = argv[++i];
    if (flag == "--tfd") {
      o.tfd = value;
    } else if (flag == "--steps") {
      TFD_ASSIGN_OR_RETURN(long v, ParseCount(flag, value, 1, 10000000));
      o.steps = static_cast<int>(v);
    } else if (flag == "--reps") {
      TFD_ASSIGN_OR_RETURN(long v, ParseCount(flag, value, 1, 1000));
      o.reps = static_cast<int>(v);
    } else if (flag == "--warmup") {
      TFD_ASSIGN_OR_RETURN(long v, ParseCount(flag, value, 0, 1000000));
      o.warmup = static_cast<int>(v);
    } else if (flag == "--traced") {
      TFD_ASSIGN_OR_RETURN(long v, ParseCount(flag, value, 1, 100000));
      o.traced = static_cast<int>(v);
    } else if (flag == "--workers") {
      TFD_ASSIGN_OR_RETURN(long v, ParseCount(flag, value, 1, 2));
      o.two_workers = v == 2;
    } else if (flag == "--unpinned") {
      TFD_ASSIGN_OR_RETURN(long v, ParseCount(flag, value, 0, 1));
      o.unpinned = v == 1;
    } else if (flag == "--hosted") {
      TFD_ASSIGN_OR_RETURN(long v, ParseCount(flag, value, 0, 1));
      o.hosted = v == 1;
    } else if (flag == "--prefetch") {
      TFD_ASSIGN_OR_RETURN(long v, ParseCount(flag, value, 0, 1));
      o.prefetch = v == 1;
    } else if (flag == "--rss-steps") {
      TFD_ASSIGN_OR_RETURN(o.rss_steps, ParseCount(flag, value, 10, 100000000));
    } else if (flag == "--cpus-per-task") {
      if (value == "even") {
        o.cpus_per_task = kEvenCpus;
      } else {
        TFD_ASSIGN_OR_RETURN(long v, ParseCount(flag, value, 0, CPU_SETSIZE));
        o.cpus_per_task = static_cast<int>(v);
      }
    } else if (flag == "--worker-device") {
      if (value != "cpu" && value != "gpu") {
        return errors::InvalidArgument("--worker-device takes cpu or gpu, not '", value, "'");
      }
      o.worker_gpu = value == "gpu";
    } else if (flag == "--json") {
      o.json_path = value;
    } else if (flag == "--model") {
      if (value != "classic" && value != "large" && value != "deep") {
        return errors::InvalidArgument("--model takes classic, large or deep, not '", value, "'");
      }
      TFD_ASSIGN_OR_RETURN(o.model, examples::ParseMnistModel(value));
    } else if (flag == "--cpus") {
      const size_t comma = value.find(',');
      if (comma == std::string::npos) return errors::InvalidArgument("--cpus takes A,B");
      TFD_ASSIGN_OR_RETURN(long a, ParseCount(flag, value.substr(0, comma), 0, CPU_SETSIZE - 1));
      TFD_ASSIGN_OR_RETURN(long b, ParseCount(flag, value.substr(comma + 1), 0, CPU_SETSIZE - 1));
      o.cpu_a = static_cast<int>(a);
      o.cpu_b = static_cast<int>(b);
    } else {
      return errors::InvalidArgument("unknown flag: ", flag);
    }
  }
  // Too few CPUs for the placement is a usage error, found before anything runs.
  TFD_RETURN_IF_ERROR(PlaceTasks(o, 1).status());
  if (o.two_workers && o.rss_steps == 0) TFD_RETURN_IF_ERROR(PlaceTasks(o, 2).status());
  return o;
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
  auto options = ParseFlags(argc, argv);
  if (!options.ok()) {
    if (options.status().code() == Code::kCancelled) {
      std::fputs(kUsage, stdout);
      return 0;
    }
    std::fprintf(stderr, "train_bench: error: %s\n%s", options.status().ToString().c_str(),
                 kUsage);
    return 2;
  }
  TrainSetup o = *options;
  if (access(o.tfd.c_str(), X_OK) != 0) {
    std::fprintf(stderr,
                 "train_bench: error: NOT_FOUND: no tfd binary at '%s' (use --tfd or TFD)\n",
                 o.tfd.c_str());
    return 2;
  }
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
