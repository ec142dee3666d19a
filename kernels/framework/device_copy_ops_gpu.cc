// The GPU kernels of _CopyToDevice and _CopyToHost. A copy to the host waits
// for the device's stream (the host is about to read the bytes) and lands in
// pinned host memory, from which a _Send sends; a copy to the device only
// enqueues, keeping its source (often a pushed tensor, in the host pool's
// page-locked blocks) until it has run.
#include "kernels/framework/framework_ops.h"
#include "kernels/gpu/gpu_kernel.h"
#include "kernels/gpu/register_gpu.h"

namespace tfd::gpu {
namespace {

template <bool kToHost>
class CopyGpuOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    const Tensor& in = ctx.input(0);
    GpuDevice& dev = GpuDeviceOf(ctx);
    Tensor* out = nullptr;
    if (kToHost && in.total_bytes() > 0) {
      // The input's size passed allocate_output's checks when it was made.
      auto pinned = dev.AllocatePinned(in.total_bytes());
      auto t = pinned.ok() ? Tensor::FromBuffer(in.dtype(), in.shape(), *std::move(pinned))
                           : StatusOr<Tensor>(pinned.status());
      if (t.ok()) {
        ctx.set_output(0, *std::move(t));
        out = &ctx.outputs()[0].tensor;
      }
    }
    // Pageable memory when pinned memory ran out, and every copy to the device.
    if (out == nullptr) TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, in.shape(), &out));
    if (in.total_bytes() == 0) return;
    TFD_OP_REQUIRES_OK(ctx, kToHost ? dev.CopyToHost(out->raw_data(), in.raw_data(), in.total_bytes())
                                    : dev.CopyFromHost(out->raw_data(), in));
    if (ctx.step().trace) {
      ctx.set_trace_label(std::to_string(in.total_bytes()) + " bytes " +
                          (kToHost ? "to the host" : "to ") + (kToHost ? "" : dev.name()));
    }
  }
};

}  // namespace

Status RegisterDeviceCopyGpuKernels(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(
      AddGpuKernel<CopyGpuOp<false>>(r, kernels::kCopyToDeviceOp, {}, {.inputs = 1}));
  return AddGpuKernel<CopyGpuOp<true>>(r, kernels::kCopyToHostOp, {}, {.outputs = 1});
}

}  // namespace tfd::gpu
