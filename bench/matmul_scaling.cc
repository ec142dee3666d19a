#include "bench/matmul_scaling.h"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>

#include "bench/kernel_harness.h"
#include "bench/stats.h"
#include "common/allowed_cpus.h"
#include "kernels/framework/intra_op_pool.h"
#include "kernels/math/threaded_matmul.h"
#include "kernels/register_all.h"

namespace tfd::bench {
namespace {

double Now(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

Tensor Random(std::mt19937& rng, int64_t n) {
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> values(n * n);
  for (float& v : values) v = u(rng);
  return Tensor::FromVector(values, TensorShape({n, n}));
}

// `calls` calls of `run`, each a product of a and b.
template <typename Run>
StatusOr<MatMulScalingPoint> Time(const Tensor& a, const Tensor& b, int threads, int calls,
                                  const Run& run) {
  const double flop = 2.0 * static_cast<double>(a.dim(0)) * a.dim(1) * b.dim(1);
  MatMulScalingPoint p;
  p.threads = threads;
  const double cpu0 = Now(CLOCK_PROCESS_CPUTIME_ID), wall0 = Now(CLOCK_MONOTONIC);
  for (int i = 0; i < calls; ++i) {
    const double start = Now(CLOCK_MONOTONIC);
    TFD_RETURN_IF_ERROR(run());
    p.gflops.push_back(flop / (Now(CLOCK_MONOTONIC) - start) / 1e9);
  }
  const double wall = Now(CLOCK_MONOTONIC) - wall0;
  p.cpu_per_wall = wall > 0 ? (Now(CLOCK_PROCESS_CPUTIME_ID) - cpu0) / wall : 0;
  return p;
}

// One count: a task's env with `threads` compute threads, its own
// ResourceMgr (and so its own intra-op pool, gone with it).
StatusOr<MatMulScalingPoint> MeasureAt(const OpRegistry& registry, const Tensor& a,
                                       const Tensor& b, int threads, int calls) {
  ResourceMgr resources;
  KernelEnv env;
  env.resources = &resources;
  env.compute_threads = threads;
  TFD_ASSIGN_OR_RETURN(auto k, KernelHarness::Create(registry, env, "MatMul",
                                                     {{"T", DType::kFloat32}},
                                                     {Value{a, nullptr}, Value{b, nullptr}}));
  TFD_RETURN_IF_ERROR(k->Run());  // makes the pool
  return Time(a, b, threads, calls, [&k] { return k->Run(); });
}

// The split product's code on one pool thread (the caller waits).
StatusOr<MatMulScalingPoint> MeasureContractionOne(const Tensor& a, const Tensor& b, int calls) {
  kernels::IntraOpPool pool(1);
  Tensor out = Tensor::FromVector(std::vector<float>(a.dim(0) * b.dim(1)),
                                  TensorShape({a.dim(0), b.dim(1)}));
  auto run = [&] {
    kernels::ThreadedMatMul<float>(pool, a, b, false, false, out);
    return OkStatus();
  };
  TFD_RETURN_IF_ERROR(run());
  return Time(a, b, 1, calls, run);
}

// rate(t) / (t * rate of `one`).
double Efficiency(const MatMulScalingPoint& one, const MatMulScalingPoint& p) {
  const double base = Median(one.gflops);
  return base > 0 ? Median(p.gflops) / (p.threads * base) : 0;
}

}  // namespace

StatusOr<MatMulScaling> MeasureMatMulScaling(int64_t n, int calls) {
  if (n < 1) return errors::InvalidArgument("--matmul-scaling takes a size >= 1, got ", n);
  OpRegistry registry;
  TFD_RETURN_IF_ERROR(kernels::RegisterAll(registry));
  std::mt19937 rng(40);
  const Tensor a = Random(rng, n), b = Random(rng, n);
  const int allowed = NumAllowedCpus();
  MatMulScaling s;
  for (int threads : {1, 2, 4, 8}) {
    if (threads > allowed) break;
    TFD_ASSIGN_OR_RETURN(MatMulScalingPoint p, MeasureAt(registry, a, b, threads, calls));
    s.points.push_back(std::move(p));
  }
  TFD_ASSIGN_OR_RETURN(s.contraction_one, MeasureContractionOne(a, b, calls));
  return s;
}

void PrintMatMulScaling(int64_t n, const MatMulScaling& scaling) {
  const std::vector<MatMulScalingPoint>& points = scaling.points;
  std::printf("tfd's MatMul, float32 [%lld, %lld] x [%lld, %lld], by intra-op threads (%d CPUs "
              "allowed), %zu timed calls each;\nefficiency: rate(t) / (t * rate(1)), target >= "
              "%.2f to 8 threads; vs split: rate(t) / (t * the split code's rate on one\nthread); "
              "CPU/wall: about t when the product is split over t threads\n",
              static_cast<long long>(n), static_cast<long long>(n), static_cast<long long>(n),
              static_cast<long long>(n), NumAllowedCpus(),
              points.empty() ? size_t{0} : points.front().gflops.size(), kMatMulScalingTarget);
  std::printf("  %7s %9s %9s %9s %10s %8s %8s\n", "threads", "GFLOP/s", "min", "max",
              "efficiency", "vs split", "CPU/wall");
  for (const MatMulScalingPoint& p : points) {
    const auto [lo, hi] = std::minmax_element(p.gflops.begin(), p.gflops.end());
    const double e = Efficiency(points.front(), p);
    std::printf("  %7d %9.1f %9.1f %9.1f %10.2f %8.2f %8.2f%s\n", p.threads, Median(p.gflops), *lo,
                *hi, e, Efficiency(scaling.contraction_one, p), p.cpu_per_wall,
                p.threads == 1 ? "" : e >= kMatMulScalingTarget ? "  met" : "  NOT met");
  }
  std::printf("  the split code (Tensor contraction) on one pool thread: %.1f GFLOP/s, %.2f of the "
              "1-thread kernel's (Eigen's GEMM)\n",
              Median(scaling.contraction_one.gflops),
              Median(points.front().gflops) > 0
                  ? Median(scaling.contraction_one.gflops) / Median(points.front().gflops)
                  : 0);
  if (points.size() < 4) {
    std::printf("  (8 threads need 8 allowed CPUs: the target is not judged here)\n");
  }
}

void AddMatMulScaling(int64_t n, const MatMulScaling& scaling, FiguresJson& out) {
  const std::vector<MatMulScalingPoint>& points = scaling.points;
  const std::string shape = std::to_string(n) + "x" + std::to_string(n) + "x" + std::to_string(n);
  for (const MatMulScalingPoint& p : points) {
    const std::string row = shape + ", " + std::to_string(p.threads) + " threads";
    out.AddSamples("matmul scaling", row, "tfd MatMul", "GFLOP/s", p.gflops);
    out.Add("matmul scaling", row, "efficiency", "ratio", Efficiency(points.front(), p))
        ["cpu_per_wall"] = p.cpu_per_wall;
    out.Add("matmul scaling", row, "efficiency vs the split code on 1 thread", "ratio",
            Efficiency(scaling.contraction_one, p));
  }
  out.AddSamples("matmul scaling", shape + ", 1 thread", "the split code (Tensor contraction)",
                 "GFLOP/s", scaling.contraction_one.gflops);
}

}  // namespace tfd::bench
