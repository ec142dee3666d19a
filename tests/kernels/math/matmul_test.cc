// MatMul for every transpose combination and dtype against a naive triple
// loop in float64, on the calling thread and split over the task's intra-op
// threads, on each GEMM backend built in, and its shape errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>
#include <vector>

#include "common/allowed_cpus.h"
#include "kernels/framework/intra_op_pool.h"
#include "kernels/math/gemm.h"
#include "tests/kernels/math/math_test_util.h"

namespace tfd {
namespace {

using namespace math_test;  // NOLINT: test helpers

// Element (r, c) of the stored rows x cols matrix `m`, transposed or not.
double At(const std::vector<double>& m, int64_t cols, bool transposed, int64_t r, int64_t c) {
  return transposed ? m[c * cols + r] : m[r * cols + c];
}

// What MatMul gives for Ramp operands of the given dims, and the naive
// product in float64.
struct Product {
  Tensor got;
  std::vector<double> want;
};

Product MatMulOfRamps(DType d, int64_t m, int64_t k, int64_t n, bool ta, bool tb,
                      KernelEnv* env) {
  const std::vector<int64_t> a_dims = ta ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k};
  const std::vector<int64_t> b_dims = tb ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n};
  const bool integral = d == DType::kInt32 || d == DType::kInt64;
  const std::vector<double> a = Ramp(m * k, integral ? 1 : 0.375, -4);
  const std::vector<double> b = Ramp(k * n, integral ? 2 : 0.625, -3);
  Product p;
  p.want.assign(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t q = 0; q < k; ++q) {
        p.want[i * n + j] += At(a, a_dims[1], ta, i, q) * At(b, b_dims[1], tb, q, j);
      }
    }
  }
  testing::RunOpOptions options;
  options.env = env;
  auto out = testing::RunOp(Registry(), "MatMul",
                            {{"T", d}, {"transpose_a", ta}, {"transpose_b", tb}},
                            {MakeOf(d, a_dims, a), MakeOf(d, b_dims, b)}, options);
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  p.got = (*out)[0];
  REQUIRE(p.got.shape() == TensorShape({m, n}));
  return p;
}

void CheckMatMul(DType d, int64_t m, int64_t k, int64_t n, bool ta, bool tb, double tol) {
  INFO(DTypeName(d) << " m=" << m << " k=" << k << " n=" << n << " ta=" << ta << " tb=" << tb);
  const Product p = MatMulOfRamps(d, m, k, n, ta, tb, nullptr);
  ExpectTensor(p.got, {m, n}, p.want, tol);
}

// For large products: one check of the whole result, not one per element.
void CheckExactMatMul(DType d, int64_t m, int64_t k, int64_t n, bool ta, bool tb,
                      KernelEnv* env = nullptr) {
  INFO(DTypeName(d) << " m=" << m << " k=" << k << " n=" << n << " ta=" << ta << " tb=" << tb);
  const Product p = MatMulOfRamps(d, m, k, n, ta, tb, env);
  const std::vector<double> got = Values(p.got);
  size_t differ = 0;
  for (size_t i = 0; i < got.size(); ++i) differ += got[i] != p.want[i];
  CHECK(differ == 0);
}

// Sets the process's GEMM backend for a scope, restoring the one it found.
class BackendScope {
 public:
  explicit BackendScope(kernels::GemmBackend backend) : was_(kernels::GemmBackendInUse()) {
    REQUIRE(kernels::SetGemmBackend(backend).ok());
  }
  ~BackendScope() { (void)kernels::SetGemmBackend(was_); }

 private:
  const kernels::GemmBackend was_;
};

std::vector<kernels::GemmBackend> BuiltBackends() {
  if (!kernels::GemmHasBlas()) return {kernels::GemmBackend::kEigen};
  return {kernels::GemmBackend::kEigen, kernels::GemmBackend::kBlas};
}

TEST_CASE("MatMul matches the naive product for every transpose combination") {
  const kernels::GemmBackend backend = GENERATE(from_range(BuiltBackends()));
  INFO("backend " << kernels::GemmBackendName(backend));
  const BackendScope scope(backend);
  for (DType d : {DType::kFloat64, DType::kFloat32, DType::kInt32, DType::kInt64}) {
    const double tol = d == DType::kFloat32 ? 1e-5 : 1e-12;
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        CheckMatMul(d, 2, 3, 4, ta, tb, tol);
        CheckMatMul(d, 1, 1, 1, ta, tb, tol);
        CheckMatMul(d, 5, 1, 3, ta, tb, tol);
        // Large enough for Eigen's blocked GEMM path.
        CheckMatMul(d, 37, 29, 41, ta, tb, tol);
      }
    }
  }
}

TEST_CASE("MatMul gives the same product when it splits a large one over threads") {
  const kernels::GemmBackend backend = GENERATE(from_range(BuiltBackends()));
  INFO("backend " << kernels::GemmBackendName(backend));
  const BackendScope scope(backend);
  // 256 x 512 x 512 is just large enough to be split (where there are two
  // CPUs or more). Ramp's values have few significant bits, so every sum is
  // exact in float32 in any order: the threads must give the exact product.
  REQUIRE(kernels::GemmSplitPays(256, 512, 512));
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) CheckExactMatMul(DType::kFloat32, 256, 512, 512, ta, tb);
  }
  CheckExactMatMul(DType::kFloat64, 256, 512, 512, true, false);
}

TEST_CASE("MatMul starts the task's intra-op threads for a large product only") {
  ResourceMgr resources;
  KernelEnv env;
  env.resources = &resources;
  const auto pool = [&] {
    return resources.Lookup<kernels::IntraOpPool>(kernels::IntraOpPool::kContainer,
                                                  kernels::IntraOpPool::kName);
  };
  // The classic model's largest product stays on the calling thread.
  CheckExactMatMul(DType::kFloat32, 100, 784, 100, false, false, &env);
  CHECK(pool().status().code() == Code::kNotFound);
  CheckExactMatMul(DType::kFloat32, 256, 512, 512, true, false, &env);
  if (NumAllowedCpus() == 1) {
    CHECK(pool().status().code() == Code::kNotFound);  // one CPU: no thread to split over
  } else {
    REQUIRE(pool().ok());
    CHECK((*pool())->threads() == NumAllowedCpus());
  }
}

TEST_CASE("MatMul splits over as many threads as the task's --threads, not its CPUs") {
  // tfd --threads N bounds the threads one kernel splits over too, so tasks
  // that share a host by their --threads do not each take all its CPUs.
  for (int threads : {1, 3}) {
    INFO("compute_threads " << threads);
    ResourceMgr resources;
    KernelEnv env;
    env.resources = &resources;
    env.compute_threads = threads;
    CheckExactMatMul(DType::kFloat32, 256, 512, 512, false, true, &env);
    auto pool = resources.Lookup<kernels::IntraOpPool>(kernels::IntraOpPool::kContainer,
                                                       kernels::IntraOpPool::kName);
    if (threads == 1) {
      CHECK(pool.status().code() == Code::kNotFound);  // the product stayed on this thread
    } else {
      REQUIRE(pool.ok());
      CHECK((*pool)->threads() == threads);
    }
  }
}

TEST_CASE("MatMul with an empty dimension") {
  for (bool ta : {false, true}) {
    CheckMatMul(DType::kFloat64, 3, 0, 2, ta, false, 0);  // k = 0: all zeros
    CheckMatMul(DType::kFloat64, 0, 3, 2, ta, true, 0);
    CheckMatMul(DType::kFloat64, 3, 2, 0, ta, false, 0);
  }
}

// Leaves pooled host blocks of `bytes` holding NaNs, as a tensor freed by an
// earlier step leaves them: MatMul's output skips the zero fill, so every
// element it gives must have been written by the product itself.
void DirtyThePool(size_t bytes) {
  std::vector<Tensor> held;
  for (int i = 0; i < 4; ++i) {
    auto t = Tensor::Allocate(DType::kFloat32, TensorShape({static_cast<int64_t>(bytes / 4)}));
    REQUIRE(t.ok());
    std::fill_n(t->data<float>(), bytes / 4, std::numeric_limits<float>::quiet_NaN());
    held.push_back(*std::move(t));
  }
}

TEST_CASE("MatMul's output is the product in reused memory, k = 0 included") {
  const kernels::GemmBackend backend = GENERATE(from_range(BuiltBackends()));
  INFO("backend " << kernels::GemmBackendName(backend));
  const BackendScope scope(backend);
  // 300 x 300 floats (352 KiB): pooled blocks, reused from the dirty ones.
  for (bool ta : {false, true}) {
    DirtyThePool(300 * 300 * 4);
    CheckMatMul(DType::kFloat32, 300, 0, 300, ta, false, 0);  // all zeros
    DirtyThePool(300 * 300 * 4);
    CheckMatMul(DType::kFloat32, 300, 1, 300, ta, !ta, 1e-6);
    DirtyThePool(300 * 300 * 8);
    CheckMatMul(DType::kFloat64, 300, 3, 300, ta, false, 1e-12);
  }
}

TEST_CASE("MatMul inner-dimension mismatch names both shapes") {
  ExpectInvalid("MatMul", {{"T", DType::kFloat32}},
                {Make<float>({2, 3}, Ramp(6)), Make<float>({4, 5}, Ramp(20))},
                {"[2, 3]", "[4, 5]", "3", "4"});
  // Compatible only without the transpose.
  ExpectInvalid("MatMul", {{"T", DType::kFloat32}, {"transpose_a", true}},
                {Make<float>({2, 3}, Ramp(6)), Make<float>({3, 2}, Ramp(6))},
                {"[2, 3]", "[3, 2]", "transposed"});
}

TEST_CASE("MatMul refuses operands that are not matrices") {
  ExpectInvalid("MatMul", {{"T", DType::kFloat64}},
                {Make<double>({3}, Ramp(3)), Make<double>({3, 1}, Ramp(3))}, {"rank 2", "[3]"});
  ExpectInvalid("MatMul", {{"T", DType::kFloat64}},
                {Make<double>({1, 1}, {1}), Make<double>({}, {1})}, {"rank 2", "[]"});
}

}  // namespace
}  // namespace tfd
