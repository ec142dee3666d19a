#include "bench/hand_mlp.h"

#include <Eigen/Dense>
#include <cmath>
#include <cstdlib>
#include <vector>

namespace tfd::bench {
namespace {

using M = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using V = Eigen::RowVectorXf;

constexpr int kBatch = 100, kIn = 784, kHidden = 100, kOut = 10, kBatches = 50;
constexpr float kLearningRate = 0.5f;

}  // namespace

// Everything mlp_eigen.cc's main() holds. The step below is its lambda,
// unchanged but for the names and for its split into ComputeGradients and
// Apply (the same arithmetic, so that a ps can apply the update).
struct HandMlp::State {
  std::vector<M> xs;
  std::vector<std::vector<int>> ys;
  M w1, w2;
  V b1, b2;
  M h{kBatch, kHidden}, z{kBatch, kOut}, dz{kBatch, kOut}, dh{kBatch, kHidden};
  M dw1{kIn, kHidden}, dw2{kHidden, kOut};
  V db1{kHidden}, db2{kOut};
  long step = 0;
};

HandMlp::HandMlp() : state_(std::make_unique<State>()) {
  State& s = *state_;
  std::srand(1);  // M::Random draws from rand(), as in mlp_eigen.cc
  const M teacher = M::Random(kIn, kOut);
  s.xs.resize(kBatches);
  s.ys.resize(kBatches);
  for (int b = 0; b < kBatches; ++b) {
    s.xs[b] = (M::Random(kBatch, kIn).array() + 1.f) * 0.5f;
    const M scores = s.xs[b] * teacher;
    s.ys[b].resize(kBatch);
    for (int r = 0; r < kBatch; ++r) scores.row(r).maxCoeff(&s.ys[b][r]);
  }
  const float a1 = 1.f / std::sqrt(float{kIn}), a2 = 1.f / std::sqrt(float{kHidden});
  s.w1 = M::Random(kIn, kHidden) * a1;
  s.w2 = M::Random(kHidden, kOut) * a2;
  s.b1 = V::Random(kHidden) * a1;
  s.b2 = V::Random(kOut) * a2;
}

HandMlp::~HandMlp() = default;

float HandMlp::Step() {
  const float loss = ComputeGradients();
  Apply(Parameters(), Gradients());
  return loss;
}

float HandMlp::ComputeGradients() {
  State& s = *state_;
  const M& x = s.xs[s.step % kBatches];
  const std::vector<int>& y = s.ys[s.step % kBatches];
  ++s.step;
  s.h.noalias() = x * s.w1;
  s.h.rowwise() += s.b1;
  s.h = (1.f / (1.f + (-s.h.array()).exp())).matrix();
  s.z.noalias() = s.h * s.w2;
  s.z.rowwise() += s.b2;
  float loss = 0;
  for (int r = 0; r < kBatch; ++r) {
    const float mx = s.z.row(r).maxCoeff();
    auto e = (s.z.row(r).array() - mx).exp();
    const float se = e.sum();
    s.dz.row(r) = (e / se).matrix();
    loss += -(s.z(r, y[r]) - mx - std::log(se));
    s.dz(r, y[r]) -= 1.f;
  }
  s.dz /= float{kBatch};
  s.dw2.noalias() = s.h.transpose() * s.dz;
  s.db2 = s.dz.colwise().sum();
  s.dh.noalias() = s.dz * s.w2.transpose();
  s.dh = (s.dh.array() * s.h.array() * (1.f - s.h.array())).matrix();
  s.dw1.noalias() = x.transpose() * s.dh;
  s.db1 = s.dh.colwise().sum();
  return loss / kBatch;
}

namespace {

template <typename T>
std::span<float> Whole(T& m) {
  return {m.data(), static_cast<size_t>(m.size())};
}

}  // namespace

HandMlp::Blocks HandMlp::Parameters() {
  State& s = *state_;
  return {Whole(s.w1), Whole(s.b1), Whole(s.w2), Whole(s.b2)};
}

HandMlp::Blocks HandMlp::Gradients() {
  State& s = *state_;
  return {Whole(s.dw1), Whole(s.db1), Whole(s.dw2), Whole(s.db2)};
}

void HandMlp::Apply(const Blocks& parameters, const Blocks& gradients) {
  for (int b = 0; b < kBlocks; ++b) {
    const auto n = static_cast<Eigen::Index>(parameters[b].size());
    Eigen::Map<Eigen::ArrayXf>(parameters[b].data(), n) -=
        kLearningRate * Eigen::Map<const Eigen::ArrayXf>(gradients[b].data(), n);
  }
}

}  // namespace tfd::bench
