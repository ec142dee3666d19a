#include "kernels/gpu/register_gpu.h"

namespace tfd::gpu {

Status RegisterGpuKernels(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(RegisterDeviceCopyGpuKernels(r));
  TFD_RETURN_IF_ERROR(RegisterArrayGpuKernels(r));
  TFD_RETURN_IF_ERROR(RegisterMathGpuKernels(r));
  TFD_RETURN_IF_ERROR(RegisterNnGpuKernels(r));
  TFD_RETURN_IF_ERROR(RegisterCnnGpuKernels(r));
  return RegisterStateGpuKernels(r);
}

}  // namespace tfd::gpu
