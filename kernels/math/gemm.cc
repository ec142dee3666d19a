#include "kernels/math/gemm.h"

#include <algorithm>
#include <atomic>
#include <limits>

#include "kernels/framework/intra_op_pool.h"
#include "kernels/math/openblas.h"

#define EIGEN_USE_THREADS
#include <unsupported/Eigen/CXX11/Tensor>

namespace tfd::kernels {
namespace {

// -1 until SetGemmBackend: then DefaultGemmBackend for this build and CPU.
std::atomic<int> backend_set{-1};

// Blocks of the split are whole multiples of this many rows or columns
// (besides the last): a multiple of every GEMM micro-kernel's tile, so no
// block but the last runs the slower edge kernels.
constexpr int64_t kBlockGrain = 16;

// Stored rows x cols, row-major, `ld` apart: Eigen's view of one operand.
template <typename T>
using ConstView =
    Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>, 0,
               Eigen::OuterStride<>>;
template <typename T>
using View = Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>, 0,
                        Eigen::OuterStride<>>;

template <typename T>
void EigenGemm(const GemmArgs<T>& g) {
  const ConstView<T> a(g.a, g.ta ? g.k : g.m, g.ta ? g.m : g.k, Eigen::OuterStride<>(g.lda));
  const ConstView<T> b(g.b, g.tb ? g.n : g.k, g.tb ? g.k : g.n, Eigen::OuterStride<>(g.ldb));
  View<T> c(g.c, g.m, g.n, Eigen::OuterStride<>(g.ldc));
  if (!g.ta && !g.tb) {
    c.noalias() = a * b;
  } else if (g.ta && !g.tb) {
    c.noalias() = a.transpose() * b;
  } else if (!g.ta && g.tb) {
    c.noalias() = a * b.transpose();
  } else {
    c.noalias() = a.transpose() * b.transpose();
  }
}

// OpenBLAS takes 32-bit sizes.
template <typename T>
bool FitsBlas(const GemmArgs<T>& g) {
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  return std::max({g.m, g.n, g.k, g.lda, g.ldb, g.ldc}) <= kMax;
}

// The process's OpenBLAS, loaded by the first call; null where it cannot be.
const OpenBlas* Blas() {
  static const OpenBlas* const kBlas = [] {
    StatusOr<const OpenBlas*> blas = OpenBlas::Get();
    return blas.ok() ? *blas : nullptr;
  }();
  return kBlas;
}

// One block, on this thread: m, n, k > 0. On Eigen where the library could
// not be loaded (SetGemmBackend refuses kBlas then, but a caller may name it).
template <typename T>
void SerialGemm(GemmBackend backend, const GemmArgs<T>& g) {
  if (backend == GemmBackend::kBlas && FitsBlas(g)) {
    if (const OpenBlas* blas = Blas()) return blas->Gemm(g);
  }
  EigenGemm(g);
}

// Rows [begin, end) of C, or its columns when `columns`.
template <typename T>
GemmArgs<T> Block(const GemmArgs<T>& g, bool columns, int64_t begin, int64_t end) {
  GemmArgs<T> block = g;
  if (columns) {
    block.n = end - begin;
    block.b = g.tb ? g.b + begin * g.ldb : g.b + begin;
    block.c = g.c + begin;
  } else {
    block.m = end - begin;
    block.a = g.ta ? g.a + begin : g.a + begin * g.lda;
    block.c = g.c + begin * g.ldc;
  }
  return block;
}

// The product cut along C's longer side into at most `threads` blocks, all
// run at once: blocks 1.. on the pool, block 0 here. On Eigen whatever the
// backend: OpenBLAS's single-threaded build runs one call at a time
// (openblas.h), which would run the blocks one after another.
template <typename T>
void SplitGemm(const IntraOpPool& pool, GemmBackend backend, const GemmArgs<T>& g) {
  const bool columns = g.n > g.m;
  const int64_t extent = columns ? g.n : g.m;
  const int64_t most = std::min<int64_t>(pool.threads(), (extent + kBlockGrain - 1) / kBlockGrain);
  int64_t size = (extent + most - 1) / most;
  size = (size + kBlockGrain - 1) / kBlockGrain * kBlockGrain;
  const int64_t blocks = (extent + size - 1) / size;
  if (blocks <= 1) return SerialGemm(backend, g);
  Eigen::Barrier done(static_cast<unsigned>(blocks - 1));
  for (int64_t i = 1; i < blocks; ++i) {
    const GemmArgs<T> block = Block(g, columns, i * size, std::min(extent, (i + 1) * size));
    pool.device().getPool()->Schedule([block, &done] {
      EigenGemm(block);
      done.Notify();
    });
  }
  EigenGemm(Block(g, columns, 0, size));
  // Compute only, no I/O: each block ends, so this wait does.
  done.Wait();
}

}  // namespace

std::string_view GemmBackendName(GemmBackend backend) {
  return backend == GemmBackend::kBlas ? "blas" : "eigen";
}

StatusOr<GemmBackend> ParseGemmBackend(std::string_view name) {
  if (name == "eigen") return GemmBackend::kEigen;
  if (name != "blas") {
    return errors::InvalidArgument("a MatMul backend is 'eigen' or 'blas', got '", name, "'");
  }
  if (!GemmHasBlas()) {
    return errors::FailedPrecondition(
        "MatMul backend 'blas': this build has no OpenBLAS (meson -Dblas=enabled needs "
        "libopenblas-serial-dev)");
  }
  return GemmBackend::kBlas;
}

std::string BlasCoreName() {
  const OpenBlas* blas = Blas();
  return blas == nullptr ? std::string() : blas->core();
}

GemmBackend DefaultGemmBackend(bool has_blas, std::string_view core) {
  // OpenBLAS's x86-64 kernel sets with AVX2 and FMA or better. Others are
  // what it falls back to on a CPU newer than itself (Debian 12's 0.3.21
  // gives an Emerald Rapids Xeon "Prescott", SSE3 only: 4-5x slower than
  // Eigen's AVX-512 GEMM there).
  constexpr std::string_view kFit[] = {"Haswell", "Zen", "SkylakeX", "Cooperlake",
                                       "SapphireRapids"};
  const bool fits = std::find(std::begin(kFit), std::end(kFit), core) != std::end(kFit);
  return has_blas && fits ? GemmBackend::kBlas : GemmBackend::kEigen;
}

bool BlasIsSequential() {
  const OpenBlas* blas = Blas();
  return blas != nullptr && blas->sequential();
}

GemmBackend GemmBackendInUse() {
  const int set = backend_set.load(std::memory_order_relaxed);
  if (set >= 0) return static_cast<GemmBackend>(set);
  // The first call loads OpenBLAS: the first product, not the task's start.
  static const GemmBackend kDefault =
      DefaultGemmBackend(GemmHasBlas() && BlasIsSequential(), BlasCoreName());
  return kDefault;
}

Status SetGemmBackend(GemmBackend backend) {
  if (backend == GemmBackend::kBlas && !GemmHasBlas()) {
    return ParseGemmBackend("blas").status();
  }
  if (backend == GemmBackend::kBlas) TFD_RETURN_IF_ERROR(OpenBlas::Get().status());
  backend_set.store(static_cast<int>(backend), std::memory_order_relaxed);
  return OkStatus();
}

template <typename T>
void Gemm(const IntraOpPool* pool, GemmBackend backend, const GemmArgs<T>& g) {
  if (g.m == 0 || g.n == 0) return;
  if (g.k == 0) {
    // The sum of no products: zeros, whatever C held.
    for (int64_t i = 0; i < g.m; ++i) std::fill_n(g.c + i * g.ldc, g.n, T(0));
    return;
  }
  if (pool != nullptr && pool->threads() > 1 && GemmSplitPays(g.m, g.n, g.k)) {
    return SplitGemm(*pool, backend, g);
  }
  SerialGemm(backend, g);
}

template <typename T>
void Gemm(const IntraOpPool* pool, const GemmArgs<T>& g) {
  // An empty product needs no backend, and loads none.
  const bool empty = g.m == 0 || g.n == 0 || g.k == 0;
  Gemm(pool, empty ? GemmBackend::kEigen : GemmBackendInUse(), g);
}

template void Gemm<float>(const IntraOpPool*, GemmBackend, const GemmArgs<float>&);
template void Gemm<double>(const IntraOpPool*, GemmBackend, const GemmArgs<double>&);
template void Gemm<float>(const IntraOpPool*, const GemmArgs<float>&);
template void Gemm<double>(const IntraOpPool*, const GemmArgs<double>&);

}  // namespace tfd::kernels
