// Gemm (kernels/math/gemm.h) on every backend this build has, against a
// float64 product: sizes on each side of the GEMM kernels' tile and vector
// widths, every transpose combination, empty dimensions, inf, NaN and
// denormals as IEEE (and numpy) give them, the backends' agreement, and a
// product split over threads.
#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <limits>
#include <random>
#include <thread>
#include <vector>

#include "kernels/framework/intra_op_pool.h"
#include "kernels/math/gemm.h"
#include "tests/kernels/math/math_test_util.h"

namespace tfd {
namespace {

using kernels::Gemm;
using kernels::GemmArgs;
using kernels::GemmBackend;

// The backends built in: Eigen always, BLAS where -Dblas found it.
std::vector<GemmBackend> Backends() {
  std::vector<GemmBackend> all = {GemmBackend::kEigen};
  if (kernels::GemmHasBlas()) all.push_back(GemmBackend::kBlas);
  return all;
}

// A stored operand: rows x cols, row-major, ld = cols.
template <typename T>
struct Operand {
  int64_t rows = 0, cols = 0;
  std::vector<T> v;
  T at(bool transposed, int64_t r, int64_t c) const {
    return transposed ? v[c * cols + r] : v[r * cols + c];
  }
};

template <typename T>
Operand<T> RandomOperand(std::mt19937& rng, int64_t rows, int64_t cols) {
  std::uniform_real_distribution<double> u(-1, 1);
  Operand<T> o{rows, cols, std::vector<T>(rows * cols)};
  for (T& x : o.v) x = static_cast<T>(u(rng));
  return o;
}

// op(a) [m, k] and op(b) [k, n] stored as Gemm takes them.
template <typename T>
struct Problem {
  int64_t m, n, k;
  bool ta, tb;
  Operand<T> a, b;
};

template <typename T>
Problem<T> RandomProblem(std::mt19937& rng, int64_t m, int64_t n, int64_t k, bool ta, bool tb) {
  return {m, n, k, ta, tb, ta ? RandomOperand<T>(rng, k, m) : RandomOperand<T>(rng, m, k),
          tb ? RandomOperand<T>(rng, n, k) : RandomOperand<T>(rng, k, n)};
}

// C from Gemm, written over NaNs: an element Gemm leaves alone shows.
template <typename T>
std::vector<T> RunGemm(const kernels::IntraOpPool* pool, GemmBackend backend,
                       const Problem<T>& p) {
  std::vector<T> c(p.m * p.n, std::numeric_limits<T>::quiet_NaN());
  const GemmArgs<T> g{.m = p.m, .n = p.n, .k = p.k, .ta = p.ta, .tb = p.tb,
                      .a = p.a.v.data(), .lda = p.a.cols, .b = p.b.v.data(), .ldb = p.b.cols,
                      .c = c.data(), .ldc = p.n};
  Gemm(pool, backend, g);
  return c;
}

// Element (i, j) in float64 and the bound on a float T sum's rounding:
// 2 k eps(T) sum |a b| (a little over the classic gamma_k bound).
struct Reference {
  double value, bound;
};

template <typename T>
Reference ReferenceAt(const Problem<T>& p, int64_t i, int64_t j) {
  double sum = 0, abs_sum = 0;
  for (int64_t q = 0; q < p.k; ++q) {
    const double x = static_cast<double>(p.a.at(p.ta, i, q)) * p.b.at(p.tb, q, j);
    sum += x;
    abs_sum += std::fabs(x);
  }
  const double eps = std::numeric_limits<T>::epsilon();
  return {sum, 2.0 * static_cast<double>(p.k) * eps * abs_sum +
                   std::numeric_limits<T>::denorm_min() * static_cast<double>(p.k)};
}

// Gemm's C against the float64 product: NaN where it is NaN, the same
// infinity, else within the rounding bound. Counts mismatches (one CHECK
// per product, not per element).
template <typename T>
void ExpectProduct(const Problem<T>& p, const std::vector<T>& c) {
  int64_t bad = 0;
  std::string first;
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t j = 0; j < p.n; ++j) {
      const Reference want = ReferenceAt(p, i, j);
      const double got = c[i * p.n + j];
      const bool ok = std::isnan(want.value)   ? std::isnan(got)
                      : std::isinf(want.value) ? got == want.value
                                               : std::fabs(got - want.value) <= want.bound;
      if (!ok && bad++ == 0) {
        first = "(" + std::to_string(i) + ", " + std::to_string(j) + "): got " +
                std::to_string(got) + ", want " + std::to_string(want.value);
      }
    }
  }
  INFO("first mismatch " << first);
  CHECK(bad == 0);
}

template <typename T>
void CheckShape(std::mt19937& rng, int64_t m, int64_t n, int64_t k) {
  for (GemmBackend backend : Backends()) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        INFO(kernels::GemmBackendName(backend) << (sizeof(T) == 4 ? " float32" : " float64")
             << " m=" << m << " n=" << n << " k=" << k << " ta=" << ta << " tb=" << tb);
        const Problem<T> p = RandomProblem<T>(rng, m, n, k, ta, tb);
        ExpectProduct(p, RunGemm<T>(nullptr, backend, p));
      }
    }
  }
}

// 1..33, then each side of 48, 64 and 128: the kernels' tile and vector
// widths (4, 8, 16 floats) and their edges.
std::vector<int64_t> EdgeSizes() {
  std::vector<int64_t> sizes;
  for (int64_t s = 1; s <= 33; ++s) sizes.push_back(s);
  for (int64_t s : {47, 48, 49, 63, 64, 65, 127, 128, 129}) sizes.push_back(s);
  return sizes;
}

TEST_CASE("Gemm matches the float64 product for every size around the kernels' edges") {
  std::mt19937 rng(40);
  for (int64_t s : EdgeSizes()) {
    CheckShape<float>(rng, s, 7, 33);  // M
    CheckShape<float>(rng, 9, s, 31);  // N
    CheckShape<float>(rng, 17, 5, s);  // K
    CheckShape<double>(rng, s, 5, 9);
    CheckShape<double>(rng, 6, s, 17);
    CheckShape<double>(rng, 3, 11, s);
  }
  for (int64_t m : {1, 17, 64, 129}) {
    for (int64_t n : {1, 16, 65}) {
      for (int64_t k : {1, 33, 128}) CheckShape<float>(rng, m, n, k);
    }
  }
}

TEST_CASE("Gemm with an empty dimension") {
  std::mt19937 rng(41);
  for (GemmBackend backend : Backends()) {
    INFO(kernels::GemmBackendName(backend));
    // k = 0: the sum of no products, zeros over whatever C held.
    const Problem<float> p = RandomProblem<float>(rng, 5, 3, 0, false, true);
    CHECK(RunGemm(nullptr, backend, p) == std::vector<float>(15, 0.0f));
    for (auto [m, n] : {std::pair<int64_t, int64_t>{0, 4}, {4, 0}, {0, 0}}) {
      CHECK(RunGemm(nullptr, backend, RandomProblem<float>(rng, m, n, 3, true, false)).empty());
    }
  }
}

// A [m, k] row-major with one special value at a(row, col).
Problem<float> WithSpecial(std::mt19937& rng, int64_t m, int64_t n, int64_t k, int64_t row,
                           int64_t col, float special) {
  Problem<float> p = RandomProblem<float>(rng, m, n, k, false, false);
  p.a.v[row * k + col] = special;
  return p;
}

TEST_CASE("Gemm propagates inf and NaN as IEEE arithmetic does") {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  std::mt19937 rng(42);
  for (GemmBackend backend : Backends()) {
    INFO(kernels::GemmBackendName(backend));
    for (int64_t size : {5, 40, 129}) {
      INFO("size " << size);
      // A NaN in A's row 2 makes that whole row of C NaN, even where B is 0.
      Problem<float> p = WithSpecial(rng, size, size, size, 2, 3, kNaN);
      p.b.v[3 * size + 1] = 0;
      std::vector<float> c = RunGemm(nullptr, backend, p);
      ExpectProduct(p, c);
      for (int64_t j = 0; j < size; ++j) CHECK(std::isnan(c[2 * size + j]));
      CHECK(!std::isnan(c[1 * size]));
      // inf times a finite b gives +-inf; times 0 (B's row 3, column 0) NaN.
      p = WithSpecial(rng, size, size, size, 1, 3, kInf);
      p.b.v[3 * size + 0] = 0;
      p.b.v[3 * size + 1] = 0.5f;
      p.b.v[3 * size + 2] = -0.5f;
      c = RunGemm(nullptr, backend, p);
      ExpectProduct(p, c);
      CHECK(std::isnan(c[1 * size + 0]));
      CHECK(c[1 * size + 1] == kInf);
      CHECK(c[1 * size + 2] == -kInf);
      // inf - inf in one sum: NaN.
      p = WithSpecial(rng, size, size, size, 0, 0, kInf);
      p.a.v[1] = -kInf;
      p.b.v[0 * size + 0] = 1;
      p.b.v[1 * size + 0] = 1;
      c = RunGemm(nullptr, backend, p);
      CHECK(std::isnan(c[0]));
    }
  }
}

TEST_CASE("Gemm keeps denormal inputs and results (no flush to zero)") {
  constexpr float kTiny = 1e-40f;  // denormal in float32
  REQUIRE(std::fpclassify(kTiny) == FP_SUBNORMAL);
  for (GemmBackend backend : Backends()) {
    for (int64_t size : {3, 64, 130}) {
      INFO(kernels::GemmBackendName(backend) << " size " << size);
      Problem<float> p{size, size, size, false, false,
                       {size, size, std::vector<float>(size * size, kTiny)},
                       {size, size, std::vector<float>(size * size, 1e30f)}};
      // Denormal times large: normal results, k * 1e-10 (0 were inputs flushed).
      std::vector<float> c = RunGemm(nullptr, backend, p);
      ExpectProduct(p, c);
      CHECK(c[0] > 0);
      // Denormal times 0.5: denormal results (0 were results flushed).
      std::fill(p.b.v.begin(), p.b.v.end(), 0.5f);
      p.a.v.assign(size * size, 0);
      p.a.v[0] = kTiny;
      c = RunGemm(nullptr, backend, p);
      CHECK(c[0] == kTiny * 0.5f);
      CHECK(std::fpclassify(c[0]) == FP_SUBNORMAL);
    }
  }
}

TEST_CASE("Gemm's backends agree within the rounding of a K-long sum") {
  if (Backends().size() < 2) SUCCEED("one backend in this build: nothing to compare");
  std::mt19937 rng(43);
  for (int64_t k : {1, 64, 1000, 4096}) {
    INFO("k " << k);
    const Problem<float> p = RandomProblem<float>(rng, 33, 65, k, false, true);
    const std::vector<float> eigen = RunGemm(nullptr, GemmBackend::kEigen, p);
    const std::vector<float> other = RunGemm(nullptr, Backends().back(), p);
    int64_t bad = 0;
    for (int64_t i = 0; i < p.m; ++i) {
      for (int64_t j = 0; j < p.n; ++j) {
        // Each within the bound of the exact sum: together within twice it.
        bad += std::fabs(eigen[i * p.n + j] - other[i * p.n + j]) > 2 * ReferenceAt(p, i, j).bound;
      }
    }
    CHECK(bad == 0);
  }
}

TEST_CASE("A split Gemm writes every block of C, on any number of threads") {
  // Both ways of splitting: along C's rows (m >= n) and its columns (m < n,
  // a batch times a wide layer), into blocks of uneven sizes. The blocks
  // may round differently from the whole (Eigen sizes its K blocks by the
  // block's shape, and so do OpenBLAS's Haswell kernels), so each result is
  // held to the float64 product's bound, not to the others' bits.
  std::mt19937 rng(44);
  const kernels::IntraOpPool two(2), three(3);
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{257, 256, 1030}, {100, 1030, 660}}) {
    REQUIRE(kernels::GemmSplitPays(m, n, k));
    for (GemmBackend backend : Backends()) {
      for (bool ta : {false, true}) {
        INFO(kernels::GemmBackendName(backend) << " m=" << m << " n=" << n << " ta=" << ta);
        const Problem<float> p = RandomProblem<float>(rng, m, n, k, ta, !ta);
        ExpectProduct(p, RunGemm(nullptr, backend, p));
        ExpectProduct(p, RunGemm(&two, backend, p));
        ExpectProduct(p, RunGemm(&three, backend, p));
      }
    }
  }
}

TEST_CASE("Products on several threads at once are each right, on every backend") {
  // Kernels run on a task's pool at once, and so do a split product's
  // blocks. Debian's single-threaded OpenBLAS shares its buffers between
  // callers that overlap (about 1 product in 10 came out wrong here, 3
  // threads calling at once, before tfd ran its calls one at a time).
  std::mt19937 rng(45);
  const Problem<float> p = RandomProblem<float>(rng, 48, 48, 64, false, true);
  for (GemmBackend backend : Backends()) {
    INFO(kernels::GemmBackendName(backend));
    const std::vector<float> alone = RunGemm(nullptr, backend, p);
    ExpectProduct(p, alone);
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 3; ++t) {
      threads.emplace_back([&] {
        for (int i = 0; i < 2000; ++i) wrong += RunGemm(nullptr, backend, p) != alone;
      });
    }
    for (std::thread& t : threads) t.join();
    CHECK(wrong == 0);
  }
}

TEST_CASE("The GEMM backend is chosen by name, 'blas' only where built") {
  CHECK(*kernels::ParseGemmBackend("eigen") == GemmBackend::kEigen);
  CHECK(kernels::ParseGemmBackend("mkl").status().code() == Code::kInvalidArgument);
  const auto blas = kernels::ParseGemmBackend("blas");
  if (kernels::GemmHasBlas()) {
    CHECK(*blas == GemmBackend::kBlas);
    CHECK(!kernels::BlasCoreName().empty());
  } else {
    CHECK(blas.status().code() == Code::kFailedPrecondition);
    CHECK(kernels::SetGemmBackend(GemmBackend::kBlas).code() == Code::kFailedPrecondition);
    CHECK(kernels::GemmBackendInUse() == GemmBackend::kEigen);
  }
}

TEST_CASE("MatMul takes OpenBLAS by default only where its kernels suit the CPU") {
  using kernels::DefaultGemmBackend;
  CHECK(DefaultGemmBackend(true, "SkylakeX") == GemmBackend::kBlas);
  CHECK(DefaultGemmBackend(true, "Haswell") == GemmBackend::kBlas);
  CHECK(DefaultGemmBackend(true, "Zen") == GemmBackend::kBlas);
  // OpenBLAS's fallback on a CPU it does not know: SSE3 only, slower than Eigen.
  CHECK(DefaultGemmBackend(true, "Prescott") == GemmBackend::kEigen);
  CHECK(DefaultGemmBackend(false, "") == GemmBackend::kEigen);
  // This binary links the single-threaded OpenBLAS and loads no other.
  CHECK(kernels::BlasIsSequential() == kernels::GemmHasBlas());
  CHECK(kernels::GemmBackendInUse() ==
        DefaultGemmBackend(kernels::GemmHasBlas(), kernels::BlasCoreName()));
}

}  // namespace
}  // namespace tfd
