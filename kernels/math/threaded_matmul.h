// The matrix product of MatMul split over a task's intra-op threads, for
// products large enough to gain from them (kThreadedMatMulMacs). Smaller
// products stay on the calling thread with Eigen's GEMM (matmul_op.cc),
// which measures faster there: see bench/NOTES.md, "The threaded MatMul
// threshold".
//
//   if (ThreadedMatMulPays(m, n, k)) ThreadedMatMul<float>(*pool, a, b, ta, tb, out);
//
// Thread-safety: pure; blocks the caller until every thread's share is done.
#pragma once

#include <cstdint>

#include "common/tensor.h"

namespace tfd::kernels {

class IntraOpPool;

// Multiply-adds from which a product is split over threads: about 2 ms on
// one core here. Below, the hand-over and the Tensor module's contraction
// cost more than the threads gain, the more so when another process has
// the other CPUs: the classic model's largest products (100 x 784 x 100,
// 7.8 M) ran 10-20 % slower split over 2 CPUs, and 38 M ones gained
// nothing; 150-400 M ones (the 784-2048-2048-10 model) ran 1.6-2x faster
// on an idle machine (bench/NOTES.md).
inline constexpr int64_t kThreadedMatMulMacs = int64_t{1} << 26;

inline bool ThreadedMatMulPays(int64_t m, int64_t n, int64_t k) {
  // In double: m * n * k of two large tensors may not fit in int64_t.
  return static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) >=
         static_cast<double>(kThreadedMatMulMacs);
}

// out [m, n] = op(a) * op(b), op transposing when ta / tb. Shapes have been
// checked; T is float or double.
template <typename T>
void ThreadedMatMul(const IntraOpPool& pool, const Tensor& a, const Tensor& b, bool ta, bool tb,
                    Tensor& out);

}  // namespace tfd::kernels
