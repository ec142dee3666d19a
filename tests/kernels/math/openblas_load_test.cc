// OpenBLAS loaded on demand (kernels/math/openblas.h): not mapped until the
// first product that needs it, then right, on the single-threaded build,
// with kernels for this CPU -- also in a process where another (threaded)
// libopenblas.so.0 came first, as numpy's does in Python. Each case needs a
// fresh process: meson runs this binary once per tag
// (tests/kernels/math/meson.build).
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "kernels/math/gemm.h"
#include "kernels/math/openblas.h"

namespace tfd {
namespace {

using kernels::GemmArgs;
using kernels::GemmBackend;
using kernels::OpenBlas;

// Whether a file whose path contains `name` is mapped into this process.
bool Mapped(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find(name) != std::string::npos) return true;
  }
  return false;
}

// A [m, k] x [k, n] float product through Gemm's default backend, checked
// element by element against a float64 sum: the number of elements off by
// more than float rounding allows.
int64_t WrongElements(int64_t m, int64_t n, int64_t k) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> a(m * k), b(k * n), c(m * n, std::nanf(""));
  for (float& x : a) x = u(rng);
  for (float& x : b) x = u(rng);
  kernels::Gemm<float>(nullptr, GemmArgs<float>{.m = m, .n = n, .k = k, .a = a.data(), .lda = k,
                                                .b = b.data(), .ldb = n, .c = c.data(), .ldc = n});
  int64_t wrong = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0, abs_sum = 0;
      for (int64_t q = 0; q < k; ++q) {
        sum += static_cast<double>(a[i * k + q]) * b[q * n + j];
        abs_sum += std::fabs(static_cast<double>(a[i * k + q]) * b[q * n + j]);
      }
      const double bound = 2.0 * static_cast<double>(k) * 1.2e-7 * abs_sum;
      if (!(std::fabs(c[i * n + j] - sum) <= bound)) ++wrong;
    }
  }
  return wrong;
}

// What the first product should have made of the library: the serial build,
// on the kernels tfd named for this CPU (where the user named none).
void ExpectLoadedForThisCpu(bool user_named_core) {
  REQUIRE(OpenBlas::Loaded());
  StatusOr<const OpenBlas*> blas = OpenBlas::Get();
  REQUIRE(blas.ok());
  INFO("loaded " << (*blas)->file() << ", kernels " << (*blas)->core());
  CHECK((*blas)->sequential());
  CHECK(kernels::BlasIsSequential());
  const std::string_view want = kernels::OpenBlasCoreForThisCpu();
  if (!user_named_core && !want.empty()) {
    CHECK((*blas)->core() == want);
    CHECK(std::string(std::getenv("OPENBLAS_CORETYPE")) == want);
    // AVX2-class kernels: MatMul runs on them.
    CHECK(kernels::GemmBackendInUse() == GemmBackend::kBlas);
  }
}

bool UserNamedCore() {
  const char* core = std::getenv("OPENBLAS_CORETYPE");
  return core != nullptr && *core != '\0';
}

TEST_CASE("OpenBLAS is loaded by the first product, not at start", "[lazy]") {
  const bool user_named_core = UserNamedCore();
  CHECK_FALSE(OpenBlas::Loaded());
  CHECK_FALSE(Mapped("libopenblas"));
  CHECK_FALSE(Mapped("libgfortran"));
  // An empty product needs no library.
  kernels::Gemm<float>(nullptr, GemmArgs<float>{.m = 0, .n = 4, .k = 4});
  CHECK_FALSE(Mapped("libopenblas"));

  CHECK(WrongElements(67, 45, 129) == 0);
  CHECK(Mapped("libopenblas"));
  ExpectLoadedForThisCpu(user_named_core);
  // The next products use the same library, still right.
  CHECK(WrongElements(130, 17, 64) == 0);
}

TEST_CASE("Beside another process-wide libopenblas.so.0, tfd loads its serial one",
          "[beside-threaded]") {
  const bool user_named_core = UserNamedCore();
  // numpy's OpenBLAS, the threaded build, loaded first under the soname.
  void* threaded = dlopen(TFD_TEST_THREADED_OPENBLAS, RTLD_NOW | RTLD_LOCAL);
  INFO(TFD_TEST_THREADED_OPENBLAS << ": " << (threaded == nullptr ? dlerror() : "loaded"));
  REQUIRE(threaded != nullptr);
  auto parallel = reinterpret_cast<int (*)()>(dlsym(threaded, "openblas_get_parallel"));
  REQUIRE(parallel != nullptr);
  REQUIRE(parallel() != 0);
  REQUIRE(dlopen("libopenblas.so.0", RTLD_NOW | RTLD_NOLOAD) == threaded);

  CHECK(WrongElements(67, 45, 129) == 0);
  ExpectLoadedForThisCpu(user_named_core);
  CHECK((*OpenBlas::Get())->file() != TFD_TEST_THREADED_OPENBLAS);
}

}  // namespace
}  // namespace tfd
