// What bench/kernel_cases.cc, kernel_optimizer_cases.cc and
// large_matmul_cases.cc share:
// the classic model's sizes, random inputs, owned copies for the
// hand-written side and the comparison of the two sides' results.
//
// Thread-safety: pure functions.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "bench/kernel_cases.h"
#include "common/tensor_eigen.h"

namespace tfd::bench::cases_internal {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Row = Eigen::RowVectorXf;

// The classic model's sizes.
constexpr int64_t kBatch = 100, kPixels = 784, kHidden = 100, kClasses = 10;

inline const AttrMap kF32 = {{"T", DType::kFloat32}};

inline std::string ShapeOf(const Tensor& t) { return t.shape().ToString(); }

// A tensor of the given shape, uniform in [lo, hi).
inline Tensor Uniform(std::mt19937& rng, TensorShape shape, float lo, float hi) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> values(shape.num_elements());
  for (float& v : values) v = u(rng);
  return Tensor::FromVector(values, shape);
}

// One-hot rows, as IdxNextBatch gives the classic model.
inline Tensor OneHot(std::mt19937& rng, int64_t rows, int64_t classes) {
  std::uniform_int_distribution<int64_t> pick(0, classes - 1);
  std::vector<float> values(rows * classes);
  for (int64_t r = 0; r < rows; ++r) values[r * classes + pick(rng)] = 1.f;
  return Tensor::FromVector(values, TensorShape({rows, classes}));
}

// An owned copy, so the hand-written side never shares tfd's buffers.
inline Matrix Copy(const Tensor& t) {
  const int64_t cols = t.rank() == 0 ? 1 : t.dim(t.rank() - 1);
  return EigenMatrix<float>(t, t.num_elements() / std::max<int64_t>(cols, 1), cols);
}

// max |a - b| / max |b|: 0 when they agree, ~1e-7 for float rounding.
inline double RelativeDifference(const Tensor& a, const Matrix& b) {
  const auto x = EigenFlat<float>(a);
  const auto y = Eigen::Map<const Eigen::ArrayXf>(b.data(), b.size());
  if (x.size() != y.size()) return INFINITY;
  const double scale = std::max(1e-30, static_cast<double>(y.abs().maxCoeff()));
  return static_cast<double>((x - y).abs().maxCoeff()) / scale;
}

inline Value Val(Tensor t) { return Value{std::move(t), nullptr}; }

// A case whose hand-written side fills `outputs` from its own inputs; the
// check compares tfd's outputs with them after one call of each.
struct Pure {
  std::vector<Matrix> outputs;
};
KernelCase MakePure(std::string op, std::string shapes, std::string role,
                    std::unique_ptr<KernelHarness> tfd, std::shared_ptr<Pure> state,
                    std::function<void(Pure&)> compute);

// The optimizer cases (kernel_optimizer_cases.cc), appended to `cases`.
Status AddOptimizerCases(std::vector<KernelCase>& cases, const OpRegistry& r, const KernelEnv& env,
                         std::mt19937& rng);

}  // namespace tfd::bench::cases_internal
