// The kernels of the classic MNIST step (and the other activations and
// optimizers the issue names), each on the shapes that step gives it, paired
// with the same computation hand-written in Eigen on the same inputs.
// kernel_bench times the two alternately.
//
//   OpRegistry registry; kernels::RegisterAll(registry);
//   ResourceMgr resources; KernelEnv env; env.resources = &resources;
//   TFD_ASSIGN_OR_RETURN(std::vector<KernelCase> cases, ClassicKernelCases(registry, env));
//   TFD_RETURN_IF_ERROR(cases[0].tfd->Run());
//   cases[0].hand();
//
// The hand-written side writes into buffers made once, as a program that
// knows its shapes would (../shared/peers/mlp_eigen.cc); tfd's side pays for
// a fresh output per call, as in a step.
//
// Thread-safety: one caller at a time per case.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench/kernel_harness.h"

namespace Eigen {
struct ThreadPoolDevice;
}  // namespace Eigen

namespace tfd::bench {

struct KernelCase {
  std::string op;      // "MatMul"
  std::string shapes;  // "[100, 784] x [784, 100]"
  std::string role;    // where the classic step runs it ("layer 1, forward")
  std::unique_ptr<KernelHarness> tfd;
  std::function<void()> hand;
  // The largest |tfd - hand| over the outputs, relative to the largest
  // |hand|, after one call of each from the same state: a check that the
  // two compute the same thing.
  std::function<StatusOr<double>()> check;
};

// `env` (with its ResourceMgr) must outlive the cases.
StatusOr<std::vector<KernelCase>> ClassicKernelCases(const OpRegistry& registry,
                                                     const KernelEnv& env);

// The 784-2048-2048-10 model's largest products, which tfd splits over the
// task's intra-op threads (kernels/math/gemm.h): each twice, once
// against the same contraction hand-written for `device` (as many threads),
// once against Eigen's GEMM on one thread. `device` must outlive the cases.
StatusOr<std::vector<KernelCase>> LargeMatMulCases(const OpRegistry& registry, const KernelEnv& env,
                                                   const Eigen::ThreadPoolDevice& device);

// The Deep MNIST convnet's two convolutions (batch 50, 5x5 SAME) forward,
// and their input and filter gradients, each against the same computation
// as Eigen's lazy patch expressions (bench/conv_cases.cc), on one thread.
StatusOr<std::vector<KernelCase>> ConvKernelCases(const OpRegistry& registry,
                                                  const KernelEnv& env);

}  // namespace tfd::bench
