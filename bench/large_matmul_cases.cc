// The largest products of the 784-2048-2048-10 model (batch 100), which
// tfd's MatMul splits over the task's intra-op threads: each beside the
// same contraction hand-written for Eigen's ThreadPoolDevice on as many
// threads, and beside Eigen's GEMM on one thread (what the split gains).
#define EIGEN_USE_THREADS
#include <unsupported/Eigen/CXX11/Tensor>

#include "bench/kernel_cases_internal.h"

namespace tfd::bench {
namespace {

using namespace cases_internal;

struct Product {
  TensorShape a, b;
  bool ta;
  const char* role;
};

Status AddLarge(std::vector<KernelCase>& cases, const OpRegistry& r, const KernelEnv& env,
                std::mt19937& rng, const Eigen::ThreadPoolDevice& device, const Product& p) {
  const Tensor a = Uniform(rng, p.a, -1, 1), b = Uniform(rng, p.b, -1, 1);
  const AttrMap attrs = {{"T", DType::kFloat32}, {"transpose_a", p.ta}, {"transpose_b", false}};
  const int64_t m = p.ta ? a.dim(1) : a.dim(0), n = b.dim(1);
  const std::string shapes = ShapeOf(a) + (p.ta ? "^T" : "") + " x " + ShapeOf(b);
  const int threads = device.numThreads();
  {
    TFD_ASSIGN_OR_RETURN(auto k, KernelHarness::Create(r, env, "MatMul", attrs, {Val(a), Val(b)}));
    auto s = std::make_shared<Pure>();
    s->outputs.emplace_back(m, n);
    using Map = Eigen::TensorMap<Eigen::Tensor<float, 2, Eigen::RowMajor>>;
    using ConstMap = Eigen::TensorMap<Eigen::Tensor<const float, 2, Eigen::RowMajor>>;
    cases.push_back(
        MakePure("MatMul", shapes, std::string(p.role) + ", " + std::to_string(threads) + " thr.",
                 std::move(k), s, [A = Copy(a), B = Copy(b), ta = p.ta, &device](Pure& out) {
                   const ConstMap x(A.data(), A.rows(), A.cols()), y(B.data(), B.rows(), B.cols());
                   Map z(out.outputs[0].data(), out.outputs[0].rows(), out.outputs[0].cols());
                   const Eigen::array<Eigen::IndexPair<Eigen::DenseIndex>, 1> dims = {
                       Eigen::IndexPair<Eigen::DenseIndex>(ta ? 0 : 1, 0)};
                   z.device(device) = x.contract(y, dims);
                 }));
  }
  TFD_ASSIGN_OR_RETURN(auto k, KernelHarness::Create(r, env, "MatMul", attrs, {Val(a), Val(b)}));
  auto s = std::make_shared<Pure>();
  s->outputs.emplace_back(m, n);
  cases.push_back(MakePure("MatMul", shapes, std::string(p.role) + ", vs 1 thr.", std::move(k), s,
                           [A = Copy(a), B = Copy(b), ta = p.ta](Pure& out) {
                             if (ta)
                               out.outputs[0].noalias() = A.transpose() * B;
                             else
                               out.outputs[0].noalias() = A * B;
                           }));
  return OkStatus();
}

}  // namespace

StatusOr<std::vector<KernelCase>> LargeMatMulCases(const OpRegistry& r, const KernelEnv& env,
                                                   const Eigen::ThreadPoolDevice& device) {
  std::mt19937 rng(2);
  std::vector<KernelCase> cases;
  const Product products[] = {
      {{100, 784}, {784, 2048}, false, "layer 1, fwd"},
      {{100, 2048}, {2048, 2048}, false, "layer 2, fwd"},
      {{100, 2048}, {100, 2048}, true, "layer 2, d w"},
  };
  for (const Product& p : products) TFD_RETURN_IF_ERROR(AddLarge(cases, r, env, rng, device, p));
  return cases;
}

}  // namespace tfd::bench
