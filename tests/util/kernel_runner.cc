#include "tests/util/kernel_runner.h"

#include <condition_variable>
#include <mutex>

namespace tfd::testing {

StatusOr<std::unique_ptr<KernelRunner>> KernelRunner::Make(const OpRegistry& registry,
                                                          const std::string& op, AttrMap attrs,
                                                          const RunOpOptions& options) {
  std::unique_ptr<KernelRunner> k(new KernelRunner());
  k->op_ = op;
  k->options_ = options;
  TFD_ASSIGN_OR_RETURN(const OpRegistration* reg, registry.Lookup(op));
  TFD_RETURN_IF_ERROR(CompleteAndCheckAttrs(reg->def, attrs));
  TFD_ASSIGN_OR_RETURN(k->in_types_, ArgTypes(reg->def.inputs, attrs));
  TFD_ASSIGN_OR_RETURN(k->out_types_, ArgTypes(reg->def.outputs, attrs));
  k->own_env_.resources = &k->own_resources_;
  k->env_ = options.env ? options.env : &k->own_env_;

  auto kit = reg->kernels.find(kDeviceCpu);
  if (kit == reg->kernels.end()) return errors::NotFound("no CPU kernel for ", op);
  k->node_ = NodeInfo{"test_" + op, op, k->env_->task + "/device:CPU:0"};
  OpKernelConstruction construction(k->node_, reg->def, attrs, k->in_types_, k->out_types_,
                                    *k->env_);
  TFD_ASSIGN_OR_RETURN(k->kernel_, kit->second(construction));
  return k;
}

StatusOr<std::vector<Value>> KernelRunner::Run(std::vector<Value> inputs) {
  if (in_types_.size() != inputs.size()) {
    return errors::InvalidArgument(op_, " takes ", in_types_.size(), " inputs, got ",
                                   inputs.size());
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].is_ref() && inputs[i].tensor.dtype() != in_types_[i]) {
      return errors::InvalidArgument(op_, " input ", i, " must be ", DTypeName(in_types_[i]),
                                     ", got ", inputs[i].tensor.Describe());
    }
  }
  CancellationManager own_cm;
  StepContext step;
  step.cancellation = options_.cancellation ? options_.cancellation : &own_cm;
  step.deadline = std::chrono::steady_clock::now() + options_.timeout;
  step.master = options_.master;
  step.session = options_.session;
  OpKernelContext ctx(*kernel_, *env_, step, std::move(inputs), out_types_);
  if (kernel_->is_async()) {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    static_cast<AsyncOpKernel&>(*kernel_).ComputeAsync(ctx, [&] {
      std::lock_guard<std::mutex> lock(mu);
      done = true;
      cv.notify_all();
    });
    std::unique_lock<std::mutex> lock(mu);
    if (!cv.wait_for(lock, options_.timeout, [&] { return done; })) {
      step.cancellation->Cancel(errors::DeadlineExceeded(op_, " did not finish in time"));
      cv.wait(lock, [&] { return done; });  // cancellation must end the wait
    }
  } else {
    kernel_->Compute(ctx);
  }
  TFD_RETURN_IF_ERROR(ctx.status());
  for (size_t i = 0; i < ctx.outputs().size(); ++i) {
    const Value& v = ctx.outputs()[i];
    if (!v.is_ref() && v.tensor.dtype() != out_types_[i]) {
      return errors::Internal(op_, " output ", i, " should be ", DTypeName(out_types_[i]),
                              ", kernel produced ", v.tensor.Describe());
    }
  }
  return std::move(ctx.outputs());
}

StatusOr<std::vector<Value>> RunOpValues(const OpRegistry& registry, const std::string& op,
                                         AttrMap attrs, std::vector<Value> inputs,
                                         const RunOpOptions& options) {
  TFD_ASSIGN_OR_RETURN(auto kernel, KernelRunner::Make(registry, op, std::move(attrs), options));
  return kernel->Run(std::move(inputs));
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
