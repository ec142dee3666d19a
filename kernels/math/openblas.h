// OpenBlas: the single-threaded OpenBLAS behind MatMul's GEMM (gemm.h),
// loaded with dlopen by the first product that needs it rather than linked.
// A task that never multiplies matrices (a ps, an idle worker) then maps
// neither it nor libgfortran and libquadmath: about 2 MB of its resident
// memory (docs/scaling.md).
//
// Which file: `libopenblas.so.0` as the dynamic linker finds it for this
// binary (LD_LIBRARY_PATH, then the run path meson gives it: Debian's
// openblas-serial directory), as when it was linked. Where another
// libopenblas.so.0 is already in the process (numpy's, the threaded build,
// which would answer to that name), the serial one is opened by its path, a
// copy of its own. Before the load, unless the environment already names
// one, tfd sets OPENBLAS_CORETYPE from the CPU's instruction sets
// (OpenBlasCoreFor): OpenBLAS reads it once, when it loads, and otherwise
// falls back to SSE3 kernels on CPUs newer than itself.
//
//   StatusOr<const OpenBlas*> blas = OpenBlas::Get();
//   if (blas.ok() && (*blas)->sequential()) (*blas)->Gemm(args);
//
// Thread-safety: Get may be called from any thread; the first call loads,
// the others wait for it and then share the same immutable object. The
// library stays loaded for the life of the process. Gemm may be called
// from any thread, and runs one call at a time: the single-threaded build
// gives wrong products to callers that overlap (openblas.cc).
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "kernels/math/gemm.h"

namespace tfd::kernels {

class OpenBlas {
 public:
  // The process's OpenBLAS, loaded by the first call. FAILED_PRECONDITION
  // when the build has none (-Dblas) or the library cannot be loaded (the
  // message names the file and the loader's reason); the answer, either
  // way, is the same for every later call.
  static StatusOr<const OpenBlas*> Get();
  // Whether Get has loaded it. Never loads.
  static bool Loaded();

  // The kernels OpenBLAS picked for this CPU at load ("SkylakeX", "Haswell").
  const std::string& core() const { return core_; }
  // Whether it is the single-threaded build (openblas_get_parallel() == 0).
  bool sequential() const { return sequential_; }
  // The file loaded, as the dynamic linker resolved it.
  const std::string& file() const { return file_; }

  // C = op(A) * op(B) on the calling thread, after any other thread's
  // call has returned; m, n, k > 0 and every size within int (gemm.cc
  // checks).
  template <typename T>
  void Gemm(const GemmArgs<T>& g) const;

  // Opaque: the entry points, typed in openblas.cc only.
  struct Symbols;

 private:
  OpenBlas() = default;
  static StatusOr<const OpenBlas*> Load();

  const Symbols* symbols_ = nullptr;
  std::string core_;
  bool sequential_ = false;
  std::string file_;
};

// The OPENBLAS_CORETYPE for a CPU with these instruction sets: "SkylakeX"
// with AVX-512 (F, CD, BW, DQ, VL: what OpenBLAS's SkylakeX kernels use),
// "Haswell" with AVX2 and FMA, "" otherwise (OpenBLAS's own choice then).
std::string_view OpenBlasCoreFor(bool avx512, bool avx2_fma);
// OpenBlasCoreFor this CPU.
std::string_view OpenBlasCoreForThisCpu();

}  // namespace tfd::kernels
