// ClassicSession: the classic MNIST model's training step (examples/mnist:
// 784-100-10 sigmoid, batch 100, SGD 0.001) in one LocalSession, as `tfctl
// run` builds it, over generated IDX files of MNIST's sizes. kernel_bench
// times its steps and reads per-op kernel time from traced ones.
//
//   TFD_ASSIGN_OR_RETURN(auto session, ClassicSession::Create(data_dir, 1));
//   TFD_ASSIGN_OR_RETURN(double loss, session->Step());
//   TFD_RETURN_IF_ERROR(session->TracedStep(&by_op));
//
// Thread-safety: one caller at a time.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "common/status.h"

namespace tfd::bench {

// Kernel time per op type over traced steps: summed µs and node runs.
struct OpTime {
  double micros = 0;
  long runs = 0;
};
using OpTimes = std::map<std::string, OpTime>;

class ClassicSession {
 public:
  // `data_dir` holds the four IDX files (bench/mnist_files.h); the session's
  // compute pool has `threads` threads. Runs "init".
  static StatusOr<std::unique_ptr<ClassicSession>> Create(const std::string& data_dir, int threads);
  // Use Create; the key keeps construction in this class.
  struct State;
  struct PrivateKey {};
  ClassicSession(PrivateKey, std::unique_ptr<State> state);
  ~ClassicSession();
  ClassicSession(const ClassicSession&) = delete;
  ClassicSession& operator=(const ClassicSession&) = delete;

  // One step: target "train", fetch "summaries/loss"; returns the loss.
  StatusOr<double> Step();
  // The same, traced: adds each node's kernel time to `by_op`.
  StatusOr<double> TracedStep(OpTimes* by_op);

 private:
  std::unique_ptr<State> state_;
};

}  // namespace tfd::bench
