// kernel_bench --matmul-scaling N: tfd's MatMul kernel on one float32
// product [N, N] x [N, N] with 1, 2, 4 and 8 intra-op threads (the counts
// no larger than the CPUs this process may use), as a task with that many
// CPUs runs it: each count a fresh KernelEnv whose compute_threads is the
// count, so the kernel's IntraOpPool (kernels/framework/intra_op_pool.h)
// has that many threads; with 1 the product stays on the calling thread
// (one GEMM), as on a task with one CPU. Issue 40's target: rate(t) /
// (t * rate(1)) >= 0.8 to 8 threads. Each count runs every GEMM backend the
// build has (kernels/math/gemm.h: OpenBLAS, Eigen), alternating call by
// call, so their ratio is taken under the same load.
//
//   TFD_ASSIGN_OR_RETURN(auto points, MeasureMatMulScaling(2048, 5));
//   PrintMatMulScaling(2048, points);
//   AddMatMulScaling(2048, points, json);
//
// Thread-safety: the benchmark's main thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/figures_json.h"
#include "common/status.h"

namespace tfd::bench {

inline constexpr double kMatMulScalingTarget = 0.8;

struct MatMulScalingPoint {
  int threads = 0;
  std::vector<double> gflops;  // one per timed call
  // Process CPU time over wall time across the timed calls: about `threads`
  // when the product is split over them, about 1 when it is not.
  double cpu_per_wall = 0;
};

struct MatMulScalingBackend {
  std::string name;                        // "blas", "eigen"
  std::vector<MatMulScalingPoint> points;  // 1, 2, 4, 8 threads
};

struct MatMulScaling {
  std::vector<MatMulScalingBackend> backends;  // the build's default first
};

// `calls` timed calls per count (after one untimed call, which also makes
// the pool). INVALID_ARGUMENT for n < 1.
StatusOr<MatMulScaling> MeasureMatMulScaling(int64_t n, int calls);

void PrintMatMulScaling(int64_t n, const MatMulScaling& scaling);

// Table "matmul scaling": per count and backend, series "tfd MatMul (NAME)"
// in GFLOP/s and "efficiency (NAME)" (rate(t) / (t * rate(1))).
void AddMatMulScaling(int64_t n, const MatMulScaling& scaling, FiguresJson& out);

}  // namespace tfd::bench
