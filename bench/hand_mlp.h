// HandMlp: the classic model's training step written by hand in Eigen, the
// ceiling tfd's kernels are measured against. It is the step of
// ../shared/peers/mlp_eigen.cc (784-100-10, sigmoid hidden layer, softmax
// cross-entropy, batch 100, plain SGD, 50 pre-made batches of synthetic
// data) compiled here with the flags tfd's kernels get, so a ratio between
// the two compares code, not compiler options.
//
//   HandMlp mlp;
//   for (int i = 0; i < n; ++i) loss = mlp.Step();
//
// A parameter server splits the step: the worker computes the gradients at
// the parameters it was sent, the ps applies them (bench/raw_ps.h).
//
// Thread-safety: one caller at a time; Eigen runs on the calling thread.
#pragma once

#include <array>
#include <memory>
#include <span>

namespace tfd::bench {

class HandMlp {
 public:
  HandMlp();
  ~HandMlp();
  HandMlp(const HandMlp&) = delete;
  HandMlp& operator=(const HandMlp&) = delete;

  // One step on the next batch; returns its mean loss. The same as
  // ComputeGradients() and then Apply(Parameters(), Gradients()).
  float Step();

  // The next batch's gradients at the current parameters, which stay as
  // they are; returns the batch's mean loss.
  float ComputeGradients();

  // w1, b1, w2, b2 (and their gradients, from the last ComputeGradients) as
  // four blocks in that order: what a ps and its worker move, in place.
  static constexpr int kBlocks = 4;
  using Blocks = std::array<std::span<float>, kBlocks>;
  Blocks Parameters();
  Blocks Gradients();

  // Step()'s update: parameters -= learning rate * gradients, block by block.
  static void Apply(const Blocks& parameters, const Blocks& gradients);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace tfd::bench
