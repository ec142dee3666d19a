// RunOp: runs one op's CPU kernel on given inputs, outside any graph — the
// kernel tests' way in (TensorFlow's OpsTestBase, in one function).
//
//   OpRegistry reg; kernels::RegisterAll(reg);
//   auto out = RunOp(reg, "Add", {{"T", DType::kFloat32}}, {a, b});
//   REQUIRE(out.ok());
//
// Defaults fill in missing attrs; the input and output dtypes follow from the
// attrs as in a graph. Async kernels are waited for (up to `timeout`).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "common/op_kernel.h"

namespace tfd::testing {

struct RunOpOptions {
  KernelEnv* env = nullptr;  // default: a fresh env with its own ResourceMgr
  CancellationManager* cancellation = nullptr;
  std::chrono::milliseconds timeout{10000};
  std::string master;  // StepContext::master: the replica the run belongs to
  SessionPresence session;  // StepContext::session: the session it runs for
};

// One kernel built once and run many times, as the executor keeps a node's
// kernel across steps (what a kernel holds between runs, such as a batch
// prepared ahead, is then exercised).
//
//   auto k = KernelRunner::Make(reg, "IdxNextBatch", {{"batch_size", int64_t{4}}}, options);
//   REQUIRE(k.ok());
//   auto first = (*k)->Run({handle});
class KernelRunner {
 public:
  static StatusOr<std::unique_ptr<KernelRunner>> Make(const OpRegistry& registry,
                                                      const std::string& op, AttrMap attrs,
                                                      const RunOpOptions& options = {});
  // Runs the kernel once; inputs as values (Value.ref set for reference
  // inputs), outputs likewise.
  StatusOr<std::vector<Value>> Run(std::vector<Value> inputs);

 private:
  KernelRunner() = default;

  std::string op_;
  RunOpOptions options_;
  ResourceMgr own_resources_;
  KernelEnv own_env_;
  const KernelEnv* env_ = nullptr;
  std::vector<DType> in_types_, out_types_;
  NodeInfo node_;
  std::unique_ptr<OpKernel> kernel_;
};

// Inputs as values (Value.ref set for reference inputs); outputs likewise.
StatusOr<std::vector<Value>> RunOpValues(const OpRegistry& registry, const std::string& op,
                                         AttrMap attrs, std::vector<Value> inputs,
                                         const RunOpOptions& options = {});

// Tensor-only convenience: every input and output a plain tensor.
StatusOr<std::vector<Tensor>> RunOp(const OpRegistry& registry, const std::string& op,
                                    AttrMap attrs, std::vector<Tensor> inputs,
                                    const RunOpOptions& options = {});

}  // namespace tfd::testing
