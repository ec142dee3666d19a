// kernel_bench --matmul-scaling N: tfd's MatMul kernel on one float32
// product [N, N] x [N, N] with 1, 2, 4 and 8 intra-op threads (the counts
// no larger than the CPUs this process may use), as a task with that many
// CPUs runs it: each count a fresh KernelEnv whose compute_threads is the
// count, so the kernel's IntraOpPool (kernels/framework/intra_op_pool.h)
// has that many threads; with 1 the product stays on the calling thread
// (Eigen's GEMM), as on a task with one CPU. Issue 40's target: rate(t) /
// (t * rate(1)) >= 0.8 to 8 threads. Beside it, the split product's own
// code (kernels/math/threaded_matmul.h, Eigen's Tensor contraction) on a
// pool of one thread: how much of a shortfall is that code rather than the
// threads.
//
//   TFD_ASSIGN_OR_RETURN(auto points, MeasureMatMulScaling(2048, 5));
//   PrintMatMulScaling(2048, points);
//   AddMatMulScaling(2048, points, json);
//
// Thread-safety: the benchmark's main thread.
#pragma once

#include <cstdint>
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

struct MatMulScaling {
  std::vector<MatMulScalingPoint> points;  // by the kernel, 1, 2, 4, 8 threads
  MatMulScalingPoint contraction_one;      // ThreadedMatMul on a 1-thread pool
};

// `calls` timed calls per count (after one untimed call, which also makes
// the pool). INVALID_ARGUMENT for n < 1.
StatusOr<MatMulScaling> MeasureMatMulScaling(int64_t n, int calls);

void PrintMatMulScaling(int64_t n, const MatMulScaling& scaling);

// Table "matmul scaling": per count, series "tfd MatMul" in GFLOP/s and
// "efficiency" (rate(t) / (t * rate(1))).
void AddMatMulScaling(int64_t n, const MatMulScaling& scaling, FiguresJson& out);

}  // namespace tfd::bench
