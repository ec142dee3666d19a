// What a family's GPU kernel file (*_gpu.cc) uses: registration of a kernel
// class for the GPU, and the checks every launch goes through.
//
//   class NegGpuOp : public OpKernel { ... Compute launches on GpuDeviceOf(ctx) ... };
//   TFD_RETURN_IF_ERROR(AddGpuKernel<NegGpuOp>(r, "Neg", kFloatT));
//   // shapes and axes the kernel reads on the host stay there:
//   TFD_RETURN_IF_ERROR(AddGpuKernel<SumGpuOp>(r, "Sum", kNumberT, {.inputs = 1 << 1}));
#pragma once

#include <memory>

#include "common/op_kernel.h"
#include "kernels/gpu/gpu_abi.h"
#include "kernels/gpu/gpu_device.h"

namespace tfd::gpu {

// The element types most GPU kernels take, by their "T" attr: placement
// keeps other types (the int32 shape arithmetic of a gradient) on the CPU.
inline const KernelTypes kFloatT{"T", {DType::kFloat32, DType::kFloat64}};
inline const KernelTypes kNumberT{"T", {DType::kFloat32, DType::kFloat64, DType::kInt32,
                                        DType::kInt64}};

template <typename K>
Status AddGpuKernel(OpRegistry& r, const char* op, KernelTypes types = {},
                    HostMemory host_memory = {}) {
  return r.RegisterKernel(
      op, kDeviceGpu,
      [](OpKernelConstruction& c) -> StatusOr<std::unique_ptr<OpKernel>> {
        auto k = std::make_unique<K>(c);
        if (!c.status().ok()) return c.status();
        return std::unique_ptr<OpKernel>(std::move(k));
      },
      host_memory, std::move(types));
}

// Registers the CPU kernel of `op` for the GPU too: for kernels that never
// touch the elements (Identity, Reshape, a variable's bookkeeping), which
// work unchanged on tensors in device memory.
Status ShareCpuKernel(OpRegistry& r, const char* op, HostMemory host_memory = {});

// The launcher type of `t`'s dtype when it is one of `allowed` (a bit per
// TfdGpuType), else INVALID_ARGUMENT naming the op and the dtype.
StatusOr<int> GpuTypeFor(const OpKernelContext& ctx, const Tensor& t, unsigned allowed);
inline constexpr unsigned kGpuFloats = 1u << TFD_GPU_F32 | 1u << TFD_GPU_F64;
inline constexpr unsigned kGpuNumbers = kGpuFloats | 1u << TFD_GPU_I32 | 1u << TFD_GPU_I64;

}  // namespace tfd::gpu

// In a GPU kernel's Compute: a launcher's result checked, the step failed
// with the device's error otherwise.
#define TFD_GPU_LAUNCH(CTX, DEV, CALL) TFD_OP_REQUIRES_OK(CTX, (DEV).Check((CALL), (CTX).node().op))
