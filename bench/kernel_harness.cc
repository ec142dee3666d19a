#include "bench/kernel_harness.h"

namespace tfd::bench {

KernelHarness::KernelHarness(PrivateKey, const KernelEnv& env, NodeInfo node,
                             std::vector<Value> inputs, std::vector<DType> output_types)
    : env_(env),
      node_(std::move(node)),
      inputs_(std::move(inputs)),
      output_types_(std::move(output_types)) {
  step_.cancellation = &cancellation_;
}

StatusOr<std::unique_ptr<KernelHarness>> KernelHarness::Create(const OpRegistry& registry,
                                                               const KernelEnv& env,
                                                               const std::string& op, AttrMap attrs,
                                                               std::vector<Value> inputs) {
  TFD_ASSIGN_OR_RETURN(const OpRegistration* reg, registry.Lookup(op));
  TFD_RETURN_IF_ERROR(CompleteAndCheckAttrs(reg->def, attrs));
  TFD_ASSIGN_OR_RETURN(auto in_types, ArgTypes(reg->def.inputs, attrs));
  TFD_ASSIGN_OR_RETURN(auto out_types, ArgTypes(reg->def.outputs, attrs));
  if (in_types.size() != inputs.size()) {
    return errors::InvalidArgument(op, " takes ", in_types.size(), " inputs, got ", inputs.size());
  }
  auto factory = reg->kernels.find(kDeviceCpu);
  if (factory == reg->kernels.end()) return errors::NotFound("no CPU kernel for ", op);
  auto h = std::make_unique<KernelHarness>(PrivateKey{}, env,
                                           NodeInfo{"bench_" + op, op, env.task + "/device:CPU:0"},
                                           std::move(inputs), out_types);
  OpKernelConstruction construction(h->node_, reg->def, attrs, in_types, out_types, env);
  TFD_ASSIGN_OR_RETURN(h->kernel_, factory->second(construction));
  if (h->kernel_->is_async()) return errors::InvalidArgument(op, " is asynchronous");
  return h;
}

Status KernelHarness::Run() { return RunAndKeep().status(); }

StatusOr<std::vector<Value>> KernelHarness::RunAndKeep() {
  OpKernelContext ctx(*kernel_, env_, step_, inputs_, output_types_);
  kernel_->Compute(ctx);
  TFD_RETURN_IF_ERROR(ctx.status());
  return std::move(ctx.outputs());
}

}  // namespace tfd::bench
