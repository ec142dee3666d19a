// kernel_bench: tfd's CPU kernels at Eigen's pace? In one run: the large
// products tfd splits over threads, on every CPU; each kernel of the classic
// MNIST step (and the other activations and optimizers) beside the same
// computation hand-written in Eigen on the same shapes, pinned to one CPU;
// the Deep MNIST convnet's convolutions and their gradients beside Eigen's
// patch expressions (bench/conv_cases.cc), on that CPU;
// then, on that CPU, the whole step in one process beside the hand-written
// step (../shared/peers/mlp_eigen.cc's, built with the same flags) and
// torch eager. Today's figures: docs/performance.md, "Kernels".
//
//   kernel_bench [--rounds 7] [--round-ms 30] [--step-rounds 7] [--steps 300]
//                [--traced 300] [--cpu N] [--torch 1] [--peers DIR]
//                [--only kernels|large|conv|step] [--filter OP] [--json FILE]
//   kernel_bench --matmul-scaling 2048 [--rounds 7] [--json FILE]
//
// --matmul-scaling N measures only tfd's MatMul on [N, N] x [N, N] with 1,
// 2, 4 and 8 intra-op threads (bench/matmul_scaling.h), unpinned.
//
// Exit status: 0 after printing the tables (a missed target is reported,
// not failed); 1 when a measurement could not be made; 2 for bad flags.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "bench/alternating_timer.h"
#include "bench/kernel_bench_report.h"
#include "bench/kernel_cases.h"
#include "bench/matmul_scaling.h"
#include "bench/proc_counters.h"
#include "common/allowed_cpus.h"
#include "common/cpu_features.h"
#include "bench/step_compare.h"
#include "common/subprocess.h"
#include "kernels/math/gemm.h"
#include "kernels/register_all.h"

#define EIGEN_USE_THREADS
#include <unsupported/Eigen/CXX11/Tensor>

#ifndef TFD_PEERS_DIR
#define TFD_PEERS_DIR "../shared/peers"
#endif

namespace tfd::bench {
namespace {

constexpr const char* kUsage =
    "usage: kernel_bench [--rounds N] [--round-ms MS] [--step-rounds N] [--steps N] "
    "[--traced N] [--cpu N] [--torch 0|1] [--peers DIR] [--only kernels|large|conv|step]\n"
    "       [--filter OP] [--json FILE] [--matmul-scaling N] [--matmul-backend blas|eigen]\n"
    "  --rounds       alternating rounds per kernel (default 7)\n"
    "  --round-ms     time of each side per kernel round (default 30)\n"
    "  --step-rounds  alternating rounds of whole steps (default 7)\n"
    "  --steps        steps of each side per round (default 300)\n"
    "  --traced       traced tfd steps for the per-op table (default 300)\n"
    "  --cpu          the CPU to pin to (default: the last allowed)\n"
    "  --torch        0 skips torch eager (default 1: when torch is installed)\n"
    "  --peers        the peers folder with run.sh (default: $TFD_PEERS, else ../shared/peers)\n"
    "  --only         one section only\n"
    "  --filter       only the kernels whose op name contains OP\n"
    "  --json         also write the figures to FILE as JSON (bench/figures_json.h)\n"
    "  --matmul-scaling N  only MatMul [N, N] x [N, N] on 1, 2, 4, 8 intra-op threads (those\n"
    "                 no more than the allowed CPUs), --rounds timed calls each: GFLOP/s and\n"
    "                 the scaling efficiency (e.g. 2048), on each GEMM backend built in\n"
    "  --matmul-backend  MatMul's GEMM for the other sections: blas (OpenBLAS; the default\n"
    "                 where built) or eigen\n";

StatusOr<long> ParseCount(const std::string& flag, const std::string& value, long lo, long hi) {
  char* end = nullptr;
  const long v = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || v < lo || v > hi) {
    return errors::InvalidArgument(flag, " takes an integer in [", lo, ", ", hi, "], got '", value,
                                   "'");
  }
  return v;
}

StatusOr<KernelBenchSetup> ParseFlags(int argc, char** argv) {
  KernelBenchSetup o;
  const std::vector<int> cpus = AllowedCpus();
  if (cpus.empty()) return errors::Internal("no CPU is allowed to this process");
  o.cpu = cpus.back();
  const char* peers = std::getenv("TFD_PEERS");
  o.peers_dir = peers != nullptr && *peers != '\0' ? peers : TFD_PEERS_DIR;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") return errors::Cancelled("help");
    if (i + 1 >= argc) return errors::InvalidArgument(flag, " needs a value");
    const std::string value = argv[++i];
    long* target = nullptr;
    long lo = 1, hi = 1000000;
    long v = 0;
    if (flag == "--rounds") {
      target = &o.rounds, hi = 1000;
    } else if (flag == "--round-ms") {
      target = &o.round_ms, hi = 60000;
    } else if (flag == "--step-rounds") {
      target = &o.step_rounds, hi = 1000;
    } else if (flag == "--steps") {
      target = &o.steps;
    } else if (flag == "--traced") {
      target = &o.traced, lo = 0;
    } else if (flag == "--matmul-scaling") {
      target = &o.matmul_scaling, hi = 32768;
    } else if (flag == "--cpu") {
      TFD_ASSIGN_OR_RETURN(v, ParseCount(flag, value, 0, CPU_SETSIZE - 1));
      o.cpu = static_cast<int>(v);
      continue;
    } else if (flag == "--torch") {
      TFD_ASSIGN_OR_RETURN(v, ParseCount(flag, value, 0, 1));
      o.torch = v == 1;
      continue;
    } else if (flag == "--peers") {
      o.peers_dir = value;
      continue;
    } else if (flag == "--matmul-backend") {
      TFD_ASSIGN_OR_RETURN(auto backend, kernels::ParseGemmBackend(value));
      TFD_RETURN_IF_ERROR(kernels::SetGemmBackend(backend));
      continue;
    } else if (flag == "--json") {
      o.json_path = value;
      continue;
    } else if (flag == "--filter") {
      o.filter = value;
      continue;
    } else if (flag == "--only") {
      if (value != "kernels" && value != "step" && value != "large" && value != "conv") {
        return errors::InvalidArgument("--only takes kernels, large, conv or step, got '", value,
                                       "'");
      }
      o.kernels = value == "kernels";
      o.large = value == "large";
      o.step = value == "step";
      o.conv = value == "conv";
      continue;
    } else {
      return errors::InvalidArgument("unknown flag: ", flag);
    }
    TFD_ASSIGN_OR_RETURN(*target, ParseCount(flag, value, lo, hi));
  }
  return o;
}

// Kernels that do no arithmetic: what any kernel call costs.
StatusOr<std::vector<FixedCost>> MeasureFixedCosts(const KernelBenchSetup& o,
                                                   const OpRegistry& registry,
                                                   const KernelEnv& env) {
  struct Probe {
    const char* what;
    const char* op;
    std::vector<int64_t> shape;  // of the one input; none when empty
  };
  const Probe probes[] = {
      {"NoOp (no inputs, no outputs)", "NoOp", {}},
      {"Identity [100, 100] (passes its input on)", "Identity", {100, 100}},
      {"ZerosLike [100, 100] (allocates 40 KB)", "ZerosLike", {100, 100}},
      {"ZerosLike [784, 100] (allocates 314 KB)", "ZerosLike", {784, 100}},
  };
  const AlternatingTimer timer(static_cast<int>(o.rounds));
  std::vector<FixedCost> costs;
  for (const Probe& p : probes) {
    std::vector<Value> inputs;
    AttrMap attrs;
    if (!p.shape.empty()) {
      inputs.push_back(
          Value{Tensor::FromVector(std::vector<float>(), TensorShape(p.shape)), nullptr});
      attrs["T"] = DType::kFloat32;
    }
    TFD_ASSIGN_OR_RETURN(auto k,
                         KernelHarness::Create(registry, env, p.op, attrs, std::move(inputs)));
    const auto run = [&k] { return k->Run(); };
    const auto nothing = [] { return OkStatus(); };
    TFD_ASSIGN_OR_RETURN(long calls, AlternatingTimer::CallsFor(run, o.round_ms / 1000.0));
    TFD_ASSIGN_OR_RETURN(Paired t, timer.Time(run, nothing, calls));
    costs.push_back({p.what, Median(t.a)});
  }
  return costs;
}

StatusOr<std::vector<KernelFigures>> MeasureCases(const KernelBenchSetup& o,
                                                  std::vector<KernelCase>& cases) {
  const AlternatingTimer timer(static_cast<int>(o.rounds));
  std::vector<KernelFigures> figures;
  for (KernelCase& c : cases) {
    if (c.op.find(o.filter) == std::string::npos) continue;
    KernelFigures f;
    f.op = c.op;
    f.shapes = c.shapes;
    f.role = c.role;
    TFD_ASSIGN_OR_RETURN(f.check, c.check());
    const auto tfd = [&c] { return c.tfd->Run(); };
    const auto hand = [&c] {
      c.hand();
      return OkStatus();
    };
    TFD_ASSIGN_OR_RETURN(long calls, AlternatingTimer::CallsFor(hand, o.round_ms / 1000.0));
    TFD_ASSIGN_OR_RETURN(f.times, timer.Time(tfd, hand, calls));
    figures.push_back(std::move(f));
  }
  return figures;
}

// The classic step's kernels, then what any kernel call costs.
Status KernelSection(const KernelBenchSetup& o, FiguresJson& json) {
  OpRegistry registry;
  TFD_RETURN_IF_ERROR(kernels::RegisterAll(registry));
  ResourceMgr resources;
  KernelEnv env;
  env.resources = &resources;
  TFD_ASSIGN_OR_RETURN(std::vector<KernelCase> cases, ClassicKernelCases(registry, env));
  TFD_ASSIGN_OR_RETURN(std::vector<KernelFigures> figures, MeasureCases(o, cases));
  TFD_ASSIGN_OR_RETURN(std::vector<FixedCost> fixed, MeasureFixedCosts(o, registry, env));
  PrintKernelTable(o, "Kernels of the classic step, one thread,", figures, fixed);
  AddKernelFigures("kernels", figures, json);
  return OkStatus();
}

// The Deep MNIST convolutions and their gradients, one thread.
Status ConvSection(const KernelBenchSetup& o, FiguresJson& json) {
  OpRegistry registry;
  TFD_RETURN_IF_ERROR(kernels::RegisterAll(registry));
  ResourceMgr resources;
  KernelEnv env;
  env.resources = &resources;
  TFD_ASSIGN_OR_RETURN(std::vector<KernelCase> cases, ConvKernelCases(registry, env));
  TFD_ASSIGN_OR_RETURN(std::vector<KernelFigures> figures, MeasureCases(o, cases));
  PrintKernelTable(o,
                   "The Deep MNIST convolutions (batch 50, 5x5 SAME), one thread, against "
                   "Eigen's patch expressions,",
                   figures, {});
  AddKernelFigures("convolutions", figures, json);
  return OkStatus();
}

// Large products on every allowed CPU: run before the process pins itself,
// so that tfd's intra-op threads (made on the first large product) and the
// hand-written side's get them all.
Status LargeSection(const KernelBenchSetup& o, FiguresJson& json) {
  OpRegistry registry;
  TFD_RETURN_IF_ERROR(kernels::RegisterAll(registry));
  ResourceMgr resources;
  KernelEnv env;
  env.resources = &resources;
  const int threads = static_cast<int>(AllowedCpus().size());
  Eigen::ThreadPool pool(threads, /*allow_spinning=*/false);  // as tfd's IntraOpPool
  const Eigen::ThreadPoolDevice device(&pool, threads);
  TFD_ASSIGN_OR_RETURN(std::vector<KernelCase> cases, LargeMatMulCases(registry, env, device));
  TFD_ASSIGN_OR_RETURN(std::vector<KernelFigures> figures, MeasureCases(o, cases));
  PrintKernelTable(o,
                   "Large products (the 784-2048-2048-10 model) on all " +
                       std::to_string(threads) + " CPUs, unpinned,",
                   figures, {});
  AddKernelFigures("large products", figures, json);
  return OkStatus();
}

// --matmul-scaling: the one section, on every allowed CPU.
int MatMulScalingMain(const KernelBenchSetup& o, int argc, char** argv) {
  std::printf("kernel_bench: %u CPUs (%s), %d allowed; built with -Dcpu=%s\n%s\nload average "
              "before: %s\n\n",
              std::thread::hardware_concurrency(), ProcLine("/proc/cpuinfo", "model name").c_str(),
              NumAllowedCpus(), std::string(CpuTarget()).c_str(), GemmDescription().c_str(),
              ProcLine("/proc/loadavg").c_str());
  std::fflush(stdout);
  FiguresJson json("kernel_bench", argc, argv);
  auto points = MeasureMatMulScaling(o.matmul_scaling, static_cast<int>(o.rounds));
  Status s = points.status();
  if (s.ok()) PrintMatMulScaling(o.matmul_scaling, *points);
  if (s.ok()) AddMatMulScaling(o.matmul_scaling, *points, json);
  if (s.ok()) s = json.Write(o.json_path);
  if (!s.ok()) {
    std::fprintf(stderr, "kernel_bench: error: %s\n", s.ToString().c_str());
    return 1;
  }
  std::printf("load average after: %s\n", ProcLine("/proc/loadavg").c_str());
  return 0;
}

int Main(int argc, char** argv) {
  auto options = ParseFlags(argc, argv);
  if (!options.ok()) {
    if (options.status().code() == Code::kCancelled) {
      std::fputs(kUsage, stdout);
      return 0;
    }
    std::fprintf(stderr, "kernel_bench: error: %s\n%s", options.status().ToString().c_str(),
                 kUsage);
    return 2;
  }
  const KernelBenchSetup o = *options;
  if (o.matmul_scaling > 0) return MatMulScalingMain(o, argc, argv);
  PrintKernelBenchHeader(o);
  FiguresJson json("kernel_bench", argc, argv);
  Status s = o.large ? LargeSection(o, json) : OkStatus();
  if (s.ok()) s = PinSelf(o.cpu);
  if (s.ok() && o.kernels) s = KernelSection(o, json);
  if (s.ok() && o.conv) s = ConvSection(o, json);
  if (s.ok() && o.step) {
    auto step = MeasureClassicStep(o);
    if (step.ok()) PrintStepTable(o, *step);
    if (step.ok()) AddStepFigures(*step, json);
    s = step.status();
  }
  if (s.ok()) s = json.Write(o.json_path);
  if (!s.ok()) {
    std::fprintf(stderr, "kernel_bench: error: %s\n", s.ToString().c_str());
    return 1;
  }
  PrintKernelBenchFooter();
  return 0;
}

}  // namespace
}  // namespace tfd::bench

int main(int argc, char** argv) { return tfd::bench::Main(argc, argv); }
