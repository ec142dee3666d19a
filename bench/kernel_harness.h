// KernelHarness: one op's CPU kernel, built once and run many times on the
// same inputs, as the executor runs it: a fresh OpKernelContext per call, so
// each call pays for its outputs' allocation like a step does.
//
//   TFD_ASSIGN_OR_RETURN(auto k, KernelHarness::Create(registry, env, "MatMul",
//                                                      {{"T", DType::kFloat32}}, {a, b}));
//   TFD_RETURN_IF_ERROR(k->Run());
//
// Thread-safety: one caller at a time.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/op_kernel.h"

namespace tfd::bench {

class KernelHarness {
 public:
  // `env` (and its ResourceMgr) must outlive the harness. Defaults fill in
  // missing attrs, as in a graph.
  static StatusOr<std::unique_ptr<KernelHarness>> Create(const OpRegistry& registry,
                                                         const KernelEnv& env,
                                                         const std::string& op, AttrMap attrs,
                                                         std::vector<Value> inputs);

  // Use Create; the key keeps construction in this class.
  struct PrivateKey {};
  KernelHarness(PrivateKey, const KernelEnv& env, NodeInfo node, std::vector<Value> inputs,
                std::vector<DType> output_types);

  // One Compute (synchronous kernels only); the outputs are dropped.
  Status Run();
  // The same, keeping the outputs for a caller to check.
  StatusOr<std::vector<Value>> RunAndKeep();

 private:
  const KernelEnv& env_;
  NodeInfo node_;
  std::unique_ptr<OpKernel> kernel_;
  std::vector<Value> inputs_;
  std::vector<DType> output_types_;
  CancellationManager cancellation_;
  StepContext step_;
};

}  // namespace tfd::bench
