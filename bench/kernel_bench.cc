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
#include "bench/bench_flags.h"
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

// The command line into `o`; exits on --help or a bad flag.
void ParseFlags(int argc, char** argv, KernelBenchSetup& o) {
  const std::vector<int> cpus = AllowedCpus();
  if (cpus.empty()) {
    std::fprintf(stderr, "kernel_bench: error: INTERNAL: no CPU is allowed to this process\n");
    std::exit(1);
  }
  o.cpu = cpus.back();
  const char* peers = std::getenv("TFD_PEERS");
  o.peers_dir = peers != nullptr && *peers != '\0' ? peers : TFD_PEERS_DIR;
  std::string only, backend;
  BenchFlags flags("kernel_bench", "each kernel of the classic model beside the same computation "
                                   "in hand-written Eigen, and the whole step beside torch eager");
  flags.Int("rounds", 1, 1000, "alternating rounds per kernel", &o.rounds)
      .Int("round-ms", 1, 60000, "time of each side per kernel round", &o.round_ms)
      .Int("step-rounds", 1, 1000, "alternating rounds of whole steps", &o.step_rounds)
      .Int("steps", 1, 1000000, "steps of each side per round", &o.steps)
      .Int("traced", 0, 1000000, "traced tfd steps for the per-op table", &o.traced)
      .Int("cpu", 0, CPU_SETSIZE - 1, "the CPU to pin to", &o.cpu)
      .ShownDefault("the last allowed")
      .Bit("torch", "0 skips torch eager (1: when torch is installed)", &o.torch)
      .Text("peers", "DIR", "the peers folder with run.sh", &o.peers_dir)
      .ShownDefault("$TFD_PEERS, else ../shared/peers")
      .Choice("only", {"kernels", "large", "conv", "step"}, "one section only", &only)
      .Text("filter", "OP", "only the kernels whose op name contains OP", &o.filter)
      .Json(&o.json_path)
      .Int("matmul-scaling", 1, 32768, "only MatMul [N, N] x [N, N] on 1, 2, 4, 8 intra-op "
           "threads (those no more than the allowed CPUs), --rounds timed calls each: GFLOP/s "
           "and the scaling efficiency (e.g. 2048), on each GEMM backend built in",
           &o.matmul_scaling)
      .ShownDefault("off")
      .Choice("matmul-backend", {"blas", "eigen"}, "MatMul's GEMM for the other sections: blas "
              "(OpenBLAS; the default where built) or eigen", &backend);
  flags.ParseOrExit(argc, argv);
  if (!only.empty()) {
    o.kernels = only == "kernels";
    o.large = only == "large";
    o.step = only == "step";
    o.conv = only == "conv";
  }
  if (!backend.empty()) {
    auto parsed = kernels::ParseGemmBackend(backend);
    const Status set = parsed.ok() ? kernels::SetGemmBackend(*parsed) : parsed.status();
    if (!set.ok()) {
      std::fprintf(stderr, "kernel_bench: error: %s\n", set.ToString().c_str());
      std::exit(2);
    }
  }
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
  KernelBenchSetup o;
  ParseFlags(argc, argv, o);
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
