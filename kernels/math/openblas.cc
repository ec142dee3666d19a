#include "kernels/math/openblas.h"

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstdlib>
#include <type_traits>

#ifdef TFD_HAVE_BLAS
#include <cblas.h>
#endif

#include "common/mutex.h"
#include "tfd_version.h"  // TFD_BLAS_SONAME, TFD_BLAS_PATH (meson.build)

namespace tfd::kernels {

#ifdef TFD_HAVE_BLAS
struct OpenBlas::Symbols {
  decltype(&cblas_sgemm) sgemm = nullptr;
  decltype(&cblas_dgemm) dgemm = nullptr;
  decltype(&openblas_get_corename) corename = nullptr;
  decltype(&openblas_get_parallel) parallel = nullptr;
};
#else
struct OpenBlas::Symbols {};
#endif

namespace {

std::atomic<bool> loaded{false};
// Debian's single-threaded build (SINGLE_THREADED, no USE_LOCKING) hands
// its working buffers out of one table without a lock: two threads in a
// GEMM at once may share a buffer, and a product comes out wrong (3
// threads calling a 48 x 64 x 48 sgemm: 1 product in 10). One call at a
// time, then.
Mutex calls;

#ifdef TFD_HAVE_BLAS
// meson.build: the soname, and the file in the directory -Dblas found it in.
constexpr const char* kSoname = TFD_BLAS_SONAME;
constexpr const char* kPath = TFD_BLAS_PATH;

// OPENBLAS_CORETYPE for this CPU, unless the environment names one. setenv
// while other threads may call getenv is safe enough with glibc: it builds a
// new environment array and never frees the one a reader may hold (the
// process's first, which is not its own). tfd sets nothing else there.
void ChooseCoreType() {
  const char* set = std::getenv("OPENBLAS_CORETYPE");
  if (set != nullptr && *set != '\0') return;
  const std::string_view core = OpenBlasCoreForThisCpu();
  if (!core.empty()) setenv("OPENBLAS_CORETYPE", std::string(core).c_str(), 1);
}

// Whether `handle`'s OpenBLAS is the single-threaded build.
bool Serial(void* handle) {
  auto parallel = reinterpret_cast<decltype(&openblas_get_parallel)>(
      dlsym(handle, "openblas_get_parallel"));
  return parallel != nullptr && parallel() == 0;
}

// The library, as the class comment says; nullptr with `why` set if none.
void* Open(std::string* why) {
  void* present = dlopen(kSoname, RTLD_NOW | RTLD_NOLOAD);
  if (present == nullptr) {
    if (void* handle = dlopen(kSoname, RTLD_NOW | RTLD_LOCAL)) return handle;
    *why = dlerror();
    // Not on the search path (a copied binary without its run path): the
    // directory the build found it in.
    if (void* handle = dlopen(kPath, RTLD_NOW | RTLD_LOCAL)) return handle;
    *why += std::string("; ") + dlerror();
    return nullptr;
  }
  if (Serial(present)) return present;
  // Another build holds the name (numpy's, threaded): ours by its path, or
  // that one if ours is missing (then MatMul stays on Eigen: not serial).
  if (void* handle = dlopen(kPath, RTLD_NOW | RTLD_LOCAL)) {
    dlclose(present);
    return handle;
  }
  return present;
}

std::string FileOf(void* handle) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr) return kSoname;
  return map->l_name;
}

template <typename F>
Status Resolve(void* handle, const std::string& file, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(handle, name));
  if (*out == nullptr) {
    return errors::FailedPrecondition("OpenBLAS ", file, " has no ", name,
                                      ": MatMul runs on Eigen");
  }
  return OkStatus();
}
#endif

}  // namespace

StatusOr<const OpenBlas*> OpenBlas::Get() {
  // A function's static: initialised once, other callers wait for it.
  static const StatusOr<const OpenBlas*> kLoaded = Load();
  return kLoaded;
}

bool OpenBlas::Loaded() { return loaded.load(std::memory_order_acquire); }

StatusOr<const OpenBlas*> OpenBlas::Load() {
#ifdef TFD_HAVE_BLAS
  ChooseCoreType();
  std::string why;
  void* handle = Open(&why);
  if (handle == nullptr) {
    return errors::FailedPrecondition("cannot load OpenBLAS (", why, "): MatMul runs on Eigen");
  }
  // Kept for the life of the process, as the library is.
  static Symbols symbols;
  static OpenBlas blas;
  blas.file_ = FileOf(handle);
  TFD_RETURN_IF_ERROR(Resolve(handle, blas.file_, "cblas_sgemm", &symbols.sgemm));
  TFD_RETURN_IF_ERROR(Resolve(handle, blas.file_, "cblas_dgemm", &symbols.dgemm));
  TFD_RETURN_IF_ERROR(Resolve(handle, blas.file_, "openblas_get_corename", &symbols.corename));
  TFD_RETURN_IF_ERROR(Resolve(handle, blas.file_, "openblas_get_parallel", &symbols.parallel));
  blas.symbols_ = &symbols;
  const char* core = symbols.corename();
  blas.core_ = core == nullptr ? "" : core;
  blas.sequential_ = symbols.parallel() == 0;
  loaded.store(true, std::memory_order_release);
  return &blas;
#else
  return errors::FailedPrecondition(
      "this build has no OpenBLAS (meson -Dblas=enabled needs libopenblas-serial-dev)");
#endif
}

template <typename T>
void OpenBlas::Gemm(const GemmArgs<T>& g) const {
#ifdef TFD_HAVE_BLAS
  const auto ta = g.ta ? CblasTrans : CblasNoTrans;
  const auto tb = g.tb ? CblasTrans : CblasNoTrans;
  const auto m = static_cast<int>(g.m), n = static_cast<int>(g.n), k = static_cast<int>(g.k);
  const auto lda = static_cast<int>(g.lda), ldb = static_cast<int>(g.ldb),
             ldc = static_cast<int>(g.ldc);
  // beta = 0: OpenBLAS writes C without reading it (no NaN from reused memory).
  MutexLock lock(calls);
  if constexpr (std::is_same_v<T, float>) {
    symbols_->sgemm(CblasRowMajor, ta, tb, m, n, k, 1.0f, g.a, lda, g.b, ldb, 0.0f, g.c, ldc);
  } else {
    symbols_->dgemm(CblasRowMajor, ta, tb, m, n, k, 1.0, g.a, lda, g.b, ldb, 0.0, g.c, ldc);
  }
#else
  (void)g;
  (void)symbols_;  // never set: Get has no library to give in this build
#endif
}

template void OpenBlas::Gemm<float>(const GemmArgs<float>&) const;
template void OpenBlas::Gemm<double>(const GemmArgs<double>&) const;

std::string_view OpenBlasCoreFor(bool avx512, bool avx2_fma) {
  if (avx512) return "SkylakeX";
  if (avx2_fma) return "Haswell";
  return "";
}

std::string_view OpenBlasCoreForThisCpu() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
                      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
                      __builtin_cpu_supports("avx512vl");
  const bool avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return OpenBlasCoreFor(avx512, avx2_fma);
#else
  return "";
#endif
}

}  // namespace tfd::kernels
