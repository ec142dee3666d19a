// Gemm: the float32 / float64 matrix product of MatMul (and BatchMatMul),
// C = op(A) * op(B) on row-major matrices, on OpenBLAS's single-threaded
// GEMM where the build has it (-Dblas), Eigen's GEMM otherwise. A product of
// at least kGemmSplitMacs multiply-adds is cut into blocks of C's rows (or
// of its columns, when it has fewer rows than columns: a batch of 100 times
// a 2048-wide layer) and the blocks run at once on Eigen (OpenBLAS's
// single-threaded build takes one call at a time), one per thread of the
// task's intra-op pool, the caller taking one. Each block is one serial
// GEMM over the whole inner dimension: the split never cuts K, so no
// partial sums are added across threads. It is not bit-for-bit the same
// whatever the thread count, though: Eigen, and some of OpenBLAS's kernel
// sets (Haswell's), size their K blocks by the block's shape, so a block
// may round differently from the whole (OpenBLAS's SkylakeX ones gave the
// same bits in tests/kernels/math/gemm_test's products).
//
//   GemmArgs<float> g{.m = m, .n = n, .k = k, .a = a, .lda = lda, ...};
//   Gemm(pool.get(), g);   // pool may be null: all on this thread
//
// The backend is the process's (GemmBackendInUse): BLAS when built and its
// kernels suit the CPU, unless SetGemmBackend chose otherwise (the benches
// compare the two; tests run both). OpenBLAS is not linked: the first
// product loads it (kernels/math/openblas.h), so a task that multiplies no
// matrices never maps it.
//
// Thread-safety: Gemm may be called from any number of threads at once; it
// blocks its caller until the whole product is written. SetGemmBackend is
// for a process's start (or a test's), before the products it should see.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tfd::kernels {

class IntraOpPool;

enum class GemmBackend { kEigen, kBlas };

// "eigen" or "blas".
std::string_view GemmBackendName(GemmBackend backend);
// The backend named `name`; INVALID_ARGUMENT for another name, and
// FAILED_PRECONDITION for "blas" in a build without OpenBLAS.
StatusOr<GemmBackend> ParseGemmBackend(std::string_view name);
// Whether this build has OpenBLAS (-Dblas found libopenblas-serial).
constexpr bool GemmHasBlas() {
#ifdef TFD_HAVE_BLAS
  return true;
#else
  return false;
#endif
}
// The OpenBLAS kernels picked for this CPU at load ("Haswell", "SkylakeX"),
// or "" without OpenBLAS. Loads it (openblas.h) if no product has yet.
std::string BlasCoreName();

// BLAS where built and its kernels for this CPU (`core`, BlasCoreName)
// use AVX2 and FMA or better; else Eigen. OpenBLAS picks its kernels when
// it loads, and one older than the CPU falls back to generic SSE3 ones;
// tfd names the ones the CPU can run in OPENBLAS_CORETYPE before it loads
// the library, unless the environment already does (openblas.h).
GemmBackend DefaultGemmBackend(bool has_blas, std::string_view core);
// Whether the OpenBLAS this process loaded is the single-threaded build:
// splitting products over tfd's threads on a threaded one would
// oversubscribe. Loads it if no product has yet.
bool BlasIsSequential();
// The backend Gemm uses: SetGemmBackend's, else DefaultGemmBackend's, with
// BLAS only where BlasIsSequential. The first call loads OpenBLAS.
GemmBackend GemmBackendInUse();
// FAILED_PRECONDITION for kBlas in a build without OpenBLAS, or where the
// library cannot be loaded (the message says why).
Status SetGemmBackend(GemmBackend backend);

// Multiply-adds from which a product is split over the pool's threads.
// Below, one GEMM on the calling thread is as fast or faster: see
// bench/NOTES.md, "The threaded MatMul threshold".
inline constexpr int64_t kGemmSplitMacs = int64_t{1} << 26;

inline bool GemmSplitPays(int64_t m, int64_t n, int64_t k) {
  // In double: m * n * k of two large tensors may not fit in int64_t.
  return static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) >=
         static_cast<double>(kGemmSplitMacs);
}

// C [m, n] = op(A) [m, k] * op(B) [k, n], all row-major; op transposes
// when ta / tb (then A is stored [k, m], B [n, k]). ld* are the strides
// between stored rows. Every element of C is written (k = 0: zeros).
template <typename T>
struct GemmArgs {
  int64_t m = 0, n = 0, k = 0;
  bool ta = false, tb = false;
  const T* a = nullptr;
  int64_t lda = 0;
  const T* b = nullptr;
  int64_t ldb = 0;
  T* c = nullptr;
  int64_t ldc = 0;
};

// T is float or double. `pool` null, or with one thread, or a product below
// kGemmSplitMacs: all on the calling thread.
template <typename T>
void Gemm(const IntraOpPool* pool, const GemmArgs<T>& g);
// The same on a backend of the caller's choosing (tests, benches).
template <typename T>
void Gemm(const IntraOpPool* pool, GemmBackend backend, const GemmArgs<T>& g);

}  // namespace tfd::kernels
