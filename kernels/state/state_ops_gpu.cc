// The state family's GPU kernels: variables whose value lives in device
// memory (VariableV2, Assign and IsVariableInitialized share the CPU
// kernels, which only move tensors), and the optimizer updates applied to
// them on the device (training_ops_gpu.cu). Hyper-parameters stay in host
// memory: they are scalars the launch takes by value.
#include <array>
#include <cmath>

#include "kernels/gpu/gpu_kernel.h"
#include "kernels/gpu/register_gpu.h"
#include "kernels/state/state_ops_internal.h"
#include "kernels/state/training_ops_gpu.h"

namespace tfd::gpu {
namespace {

using kernels::UpdateVariables;
using kernels::Variable;
using kernels::state::VariableInput;

enum class Rule { kGradientDescent, kMomentum, kAdam };

template <Rule kRule>
class ApplyGpuOp : public OpKernel {
 public:
  static constexpr int kNumVars = kRule == Rule::kGradientDescent ? 1
                                  : kRule == Rule::kMomentum      ? 2
                                                                  : 3;
  static constexpr int kGrad = kRule == Rule::kGradientDescent ? 2 : kRule == Rule::kMomentum ? 3 : 9;

  explicit ApplyGpuOp(OpKernelConstruction& c) : OpKernel(c), dtype_(c.input_type(0)) {
    c.SetStatus(c.GetAttr("use_locking", &use_locking_));
    if constexpr (kRule != Rule::kGradientDescent) {
      c.SetStatus(c.GetAttr("use_nesterov", &use_nesterov_));
    }
  }

  void Compute(OpKernelContext& ctx) override {
    std::array<std::shared_ptr<Variable>, kNumVars> vars;
    std::array<Variable*, kNumVars> raw;
    for (int i = 0; i < kNumVars; ++i) {
      auto v = VariableInput(ctx, i, dtype_);
      TFD_OP_REQUIRES_OK(ctx, v.status());
      vars[i] = *std::move(v);
      raw[i] = vars[i].get();
    }
    const Tensor& grad = ctx.input(kGrad);
    auto type = GpuTypeFor(ctx, grad, kGpuFloats);
    TFD_OP_REQUIRES_OK(ctx, type.status());
    for (int i = kNumVars; i < kGrad; ++i) {
      TFD_OP_REQUIRES(ctx, ctx.input(i).rank() == 0 && ctx.input(i).dtype() == dtype_,
                      errors::InvalidArgument("input ", i, " of ", node().op,
                                              " must be a scalar of ", DTypeName(dtype_),
                                              " but is ", ctx.input(i).Describe()));
    }
    GpuDevice& dev = GpuDeviceOf(ctx);
    Status s = UpdateVariables(raw, use_locking_, [&](std::span<Tensor> v) -> Status {
      for (int i = 0; i < kNumVars; ++i) {
        if (v[i].shape() != grad.shape() || !v[i].on_device()) {
          return errors::InvalidArgument(node().op, ": variable '", raw[i]->FullName(),
                                         "' holds ", v[i].Describe(), " but the gradient is ",
                                         grad.Describe());
        }
      }
      return dev.Check(Launch(ctx, *type, v, grad, dev.stream()), node().op);
    });
    TFD_OP_REQUIRES_OK(ctx, s);
    ctx.set_output_ref(0, vars[0]);
  }

 private:
  int Launch(const OpKernelContext& ctx, int type, std::span<Tensor> v, const Tensor& grad,
             void* stream) const {
    auto arg = [&](int i) { return ctx.input(i).raw_data(); };
    const int64_t n = grad.num_elements();
    if constexpr (kRule == Rule::kGradientDescent) {
      return tfd_gpu_apply_gradient_descent(type, v[0].raw_data(), arg(1), grad.raw_data(), n,
                                            stream);
    } else if constexpr (kRule == Rule::kMomentum) {
      return tfd_gpu_apply_momentum(type, v[0].raw_data(), v[1].raw_data(), arg(2),
                                    grad.raw_data(), arg(4), use_nesterov_, n, stream);
    } else {
      // lr_t is a scalar: computed here, in the variable's type.
      double lr_t = 0;
      float lr_t32 = 0;
      auto scalar = [&](int i) {
        return dtype_ == DType::kFloat32 ? double{ctx.input(i).scalar<float>()}
                                         : ctx.input(i).scalar<double>();
      };
      lr_t = scalar(5) * std::sqrt(1 - scalar(4)) / (1 - scalar(3));
      lr_t32 = static_cast<float>(lr_t);
      const void* lr = dtype_ == DType::kFloat32 ? static_cast<const void*>(&lr_t32) : &lr_t;
      return tfd_gpu_apply_adam(type, v[0].raw_data(), v[1].raw_data(), v[2].raw_data(), lr,
                                arg(6), arg(7), arg(8), grad.raw_data(), use_nesterov_, n, stream);
    }
  }

  const DType dtype_;
  bool use_locking_ = false;
  bool use_nesterov_ = false;
};

}  // namespace

Status RegisterStateGpuKernels(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(ShareCpuKernel(r, "VariableV2"));
  TFD_RETURN_IF_ERROR(ShareCpuKernel(r, "Assign"));
  TFD_RETURN_IF_ERROR(ShareCpuKernel(r, "IsVariableInitialized", {.outputs = 1}));
  TFD_RETURN_IF_ERROR(
      AddGpuKernel<ApplyGpuOp<Rule::kGradientDescent>>(r, "ApplyGradientDescent", kFloatT,
                                                        {.inputs = 1u << 1}));
  TFD_RETURN_IF_ERROR(AddGpuKernel<ApplyGpuOp<Rule::kMomentum>>(
      r, "ApplyMomentum", kFloatT, {.inputs = 1u << 2 | 1u << 4}));
  TFD_RETURN_IF_ERROR(
      AddGpuKernel<ApplyGpuOp<Rule::kAdam>>(r, "ApplyAdam", kFloatT, {.inputs = 0b111111000}));
  return OkStatus();
}

}  // namespace tfd::gpu
