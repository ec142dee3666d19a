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
// Thread-safety: one caller at a time; Eigen runs on the calling thread.
#pragma once

#include <memory>

namespace tfd::bench {

class HandMlp {
 public:
  HandMlp();
  ~HandMlp();
  HandMlp(const HandMlp&) = delete;
  HandMlp& operator=(const HandMlp&) = delete;

  // One step on the next batch; returns its mean loss.
  float Step();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace tfd::bench
