// KeptKernel: one kernel object run several times, as a graph runs a node
// step after step (Run may be called from several threads at once, as the
// executor may for overlapping steps). RunOp builds a fresh kernel per call, which cannot show
// that a stateful random op continues its sequence between runs.
//
//   KeptKernel k(registry, "RandomUniform", {{"dtype", DType::kFloat32}, ...});
//   Tensor first = k.Run({shape}).value()[0];
//   Tensor second = k.Run({shape}).value()[0];   // the sequence continues
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "common/op_kernel.h"

namespace tfd::testing {

class KeptKernel {
 public:
  KeptKernel(const OpRegistry& registry, const std::string& op, AttrMap attrs)
      : node_{"kept_" + op, op, env_.task + "/device:CPU:0"} {
    env_.resources = &resources_;
    status_ = Build(registry, std::move(attrs));
  }

  // The construction error, if any.
  const Status& status() const { return status_; }

  StatusOr<std::vector<Tensor>> Run(std::vector<Tensor> inputs) {
    TFD_RETURN_IF_ERROR(status_);
    std::vector<Value> values;
    for (Tensor& t : inputs) values.push_back(Value{std::move(t), nullptr});
    CancellationManager cancellation;
    StepContext step;
    step.step_id = ++steps_;
    step.cancellation = &cancellation;
    OpKernelContext ctx(*kernel_, env_, step, std::move(values), out_types_);
    kernel_->Compute(ctx);
    TFD_RETURN_IF_ERROR(ctx.status());
    std::vector<Tensor> out;
    for (Value& v : ctx.outputs()) out.push_back(std::move(v.tensor));
    return out;
  }

 private:
  Status Build(const OpRegistry& registry, AttrMap attrs) {
    TFD_ASSIGN_OR_RETURN(const OpRegistration* reg, registry.Lookup(node_.op));
    TFD_RETURN_IF_ERROR(CompleteAndCheckAttrs(reg->def, attrs));
    attrs_ = std::move(attrs);
    TFD_ASSIGN_OR_RETURN(auto in_types, ArgTypes(reg->def.inputs, attrs_));
    TFD_ASSIGN_OR_RETURN(out_types_, ArgTypes(reg->def.outputs, attrs_));
    auto factory = reg->kernels.find(kDeviceCpu);
    if (factory == reg->kernels.end()) return errors::NotFound("no CPU kernel for ", node_.op);
    OpKernelConstruction construction(node_, reg->def, attrs_, in_types, out_types_, env_);
    TFD_ASSIGN_OR_RETURN(kernel_, factory->second(construction));
    if (kernel_->is_async()) return errors::InvalidArgument(node_.op, " is asynchronous");
    return OkStatus();
  }

  ResourceMgr resources_;
  KernelEnv env_;
  NodeInfo node_;
  AttrMap attrs_;
  std::vector<DType> out_types_;
  std::unique_ptr<OpKernel> kernel_;
  std::atomic<int64_t> steps_{0};
  Status status_;
};

}  // namespace tfd::testing
