#include "tests/util/kernel_runner.h"

#include <condition_variable>
#include <mutex>

namespace tfd::testing {

StatusOr<std::vector<Value>> RunOpValues(const OpRegistry& registry, const std::string& op,
                                         AttrMap attrs, std::vector<Value> inputs,
                                         const RunOpOptions& options) {
  TFD_ASSIGN_OR_RETURN(const OpRegistration* reg, registry.Lookup(op));
  TFD_RETURN_IF_ERROR(CompleteAndCheckAttrs(reg->def, attrs));
  TFD_ASSIGN_OR_RETURN(auto in_types, ArgTypes(reg->def.inputs, attrs));
  TFD_ASSIGN_OR_RETURN(auto out_types, ArgTypes(reg->def.outputs, attrs));
  if (in_types.size() != inputs.size()) {
    return errors::InvalidArgument(op, " takes ", in_types.size(), " inputs, got ", inputs.size());
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].is_ref() && inputs[i].tensor.dtype() != in_types[i]) {
      return errors::InvalidArgument(op, " input ", i, " must be ", DTypeName(in_types[i]),
                                     ", got ", inputs[i].tensor.Describe());
    }
  }
  ResourceMgr own_resources;
  KernelEnv own_env;
  own_env.resources = &own_resources;
  const KernelEnv& env = options.env ? *options.env : own_env;

  auto kit = reg->kernels.find(kDeviceCpu);
  if (kit == reg->kernels.end()) return errors::NotFound("no CPU kernel for ", op);
  NodeInfo node{"test_" + op, op, env.task + "/device:CPU:0"};
  OpKernelConstruction construction(node, reg->def, attrs, in_types, out_types, env);
  TFD_ASSIGN_OR_RETURN(auto kernel, kit->second(construction));

  CancellationManager own_cm;
  StepContext step;
  step.cancellation = options.cancellation ? options.cancellation : &own_cm;
  step.deadline = std::chrono::steady_clock::now() + options.timeout;
  OpKernelContext ctx(*kernel, env, step, std::move(inputs), out_types);
  if (kernel->is_async()) {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    static_cast<AsyncOpKernel&>(*kernel).ComputeAsync(ctx, [&] {
      std::lock_guard<std::mutex> lock(mu);
      done = true;
      cv.notify_all();
    });
    std::unique_lock<std::mutex> lock(mu);
    if (!cv.wait_for(lock, options.timeout, [&] { return done; })) {
      step.cancellation->Cancel(errors::DeadlineExceeded(op, " did not finish in time"));
      cv.wait(lock, [&] { return done; });  // cancellation must end the wait
    }
  } else {
    kernel->Compute(ctx);
  }
  TFD_RETURN_IF_ERROR(ctx.status());
  for (size_t i = 0; i < ctx.outputs().size(); ++i) {
    const Value& v = ctx.outputs()[i];
    if (!v.is_ref() && v.tensor.dtype() != out_types[i]) {
      return errors::Internal(op, " output ", i, " should be ", DTypeName(out_types[i]),
                              ", kernel produced ", v.tensor.Describe());
    }
  }
  return std::move(ctx.outputs());
}

StatusOr<std::vector<Tensor>> RunOp(const OpRegistry& registry, const std::string& op,
                                    AttrMap attrs, std::vector<Tensor> inputs,
                                    const RunOpOptions& options) {
  std::vector<Value> values;
  for (Tensor& t : inputs) values.push_back(Value{std::move(t), nullptr});
  TFD_ASSIGN_OR_RETURN(auto out, RunOpValues(registry, op, std::move(attrs), std::move(values), options));
  std::vector<Tensor> tensors;
  for (Value& v : out) tensors.push_back(std::move(v.tensor));
  return tensors;
}

}  // namespace tfd::testing
