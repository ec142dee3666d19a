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
#include "kernels/math/gemm.h"
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

// The backends this build has, the one MatMul uses by default first.
std::vector<kernels::GemmBackend> Backends() {
  std::vector<kernels::GemmBackend> all = {kernels::GemmBackendInUse()};
  for (auto b : {kernels::GemmBackend::kBlas, kernels::GemmBackend::kEigen}) {
    if (b != all.front() && kernels::ParseGemmBackend(kernels::GemmBackendName(b)).ok()) {
      all.push_back(b);
    }
  }
  return all;
}

// One count: a task's env with `threads` compute threads, its own
// ResourceMgr (and so its own intra-op pool, gone with it); the backends
// take turns, one call each.
Status MeasureAt(const OpRegistry& registry, const Tensor& a, const Tensor& b, int threads,
                 int calls, MatMulScaling& s) {
  ResourceMgr resources;
  KernelEnv env;
  env.resources = &resources;
  env.compute_threads = threads;
  TFD_ASSIGN_OR_RETURN(auto k, KernelHarness::Create(registry, env, "MatMul",
                                                     {{"T", DType::kFloat32}},
                                                     {Value{a, nullptr}, Value{b, nullptr}}));
  const std::vector<kernels::GemmBackend> backends = Backends();
  const kernels::GemmBackend was = kernels::GemmBackendInUse();
  const double flop = 2.0 * static_cast<double>(a.dim(0)) * a.dim(1) * b.dim(1);
  std::vector<MatMulScalingPoint> points(backends.size());
  std::vector<double> cpu(backends.size()), wall(backends.size());
  Status status;
  for (int i = -1; i < calls && status.ok(); ++i) {  // call -1 makes the pool, untimed
    for (size_t j = 0; j < backends.size() && status.ok(); ++j) {
      status = kernels::SetGemmBackend(backends[j]);
      const double cpu0 = Now(CLOCK_PROCESS_CPUTIME_ID), wall0 = Now(CLOCK_MONOTONIC);
      if (status.ok()) status = k->Run();
      const double took = Now(CLOCK_MONOTONIC) - wall0;
      if (i < 0) continue;
      points[j].gflops.push_back(flop / took / 1e9);
      cpu[j] += Now(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
      wall[j] += took;
    }
  }
  TFD_RETURN_IF_ERROR(kernels::SetGemmBackend(was));
  TFD_RETURN_IF_ERROR(status);
  if (s.backends.empty()) {
    for (auto backend : backends) s.backends.push_back({std::string(kernels::GemmBackendName(backend)), {}});
  }
  for (size_t j = 0; j < backends.size(); ++j) {
    points[j].threads = threads;
    points[j].cpu_per_wall = wall[j] > 0 ? cpu[j] / wall[j] : 0;
    s.backends[j].points.push_back(std::move(points[j]));
  }
  return OkStatus();
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
    TFD_RETURN_IF_ERROR(MeasureAt(registry, a, b, threads, calls, s));
  }
  return s;
}

void PrintMatMulScaling(int64_t n, const MatMulScaling& scaling) {
  const size_t calls = scaling.backends.empty() || scaling.backends[0].points.empty()
                           ? 0
                           : scaling.backends[0].points[0].gflops.size();
  std::printf("tfd's MatMul, float32 [%lld, %lld] x [%lld, %lld], by intra-op threads (%d CPUs "
              "allowed), %zu timed calls each, the backends alternating call by call;\n"
              "efficiency: rate(t) / (t * rate(1)), target >= %.2f to 8 threads; vs %s: this "
              "backend's rate over %s's at the same count;\nCPU/wall: about t when the product "
              "is split over t threads\n",
              static_cast<long long>(n), static_cast<long long>(n), static_cast<long long>(n),
              static_cast<long long>(n), NumAllowedCpus(), calls, kMatMulScalingTarget,
              scaling.backends.back().name.c_str(), scaling.backends.back().name.c_str());
  std::printf("  %-7s %7s %9s %9s %9s %10s %8s %8s\n", "backend", "threads", "GFLOP/s", "min",
              "max", "efficiency", "ratio", "CPU/wall");
  const MatMulScalingBackend& last = scaling.backends.back();
  for (const MatMulScalingBackend& backend : scaling.backends) {
    for (size_t i = 0; i < backend.points.size(); ++i) {
      const MatMulScalingPoint& p = backend.points[i];
      const auto [lo, hi] = std::minmax_element(p.gflops.begin(), p.gflops.end());
      const double e = Efficiency(backend.points.front(), p);
      const double other = Median(last.points[i].gflops);
      std::printf("  %-7s %7d %9.1f %9.1f %9.1f %10.2f %8.2f %8.2f%s\n", backend.name.c_str(),
                  p.threads, Median(p.gflops), *lo, *hi, e,
                  other > 0 ? Median(p.gflops) / other : 0, p.cpu_per_wall,
                  p.threads == 1 ? "" : e >= kMatMulScalingTarget ? "  met" : "  NOT met");
    }
  }
  if (last.points.size() < 4) {
    std::printf("  (8 threads need 8 allowed CPUs: the target is not judged here)\n");
  }
}

void AddMatMulScaling(int64_t n, const MatMulScaling& scaling, FiguresJson& out) {
  const std::string shape = std::to_string(n) + "x" + std::to_string(n) + "x" + std::to_string(n);
  for (const MatMulScalingBackend& backend : scaling.backends) {
    for (const MatMulScalingPoint& p : backend.points) {
      const std::string row = shape + ", " + std::to_string(p.threads) + " threads";
      out.AddSamples("matmul scaling", row, "tfd MatMul (" + backend.name + ")", "GFLOP/s",
                     p.gflops);
      out.Add("matmul scaling", row, "efficiency (" + backend.name + ")", "ratio",
              Efficiency(backend.points.front(), p))["cpu_per_wall"] = p.cpu_per_wall;
    }
  }
}

}  // namespace tfd::bench
