// The GPU kernels of every op family, added to a registry that already
// holds the ops (kernels::RegisterAll first). A build without CUDA adds
// none, and GpuDevices() is empty there.
//
//   TFD_RETURN_IF_ERROR(kernels::RegisterAll(registry));
//   TFD_RETURN_IF_ERROR(gpu::RegisterGpuKernels(registry));
#pragma once

#include "common/op_registry.h"

namespace tfd::gpu {

Status RegisterGpuKernels(OpRegistry& r);

// One per family, each in that family's folder (*_gpu.cc).
Status RegisterArrayGpuKernels(OpRegistry& r);
Status RegisterCnnGpuKernels(OpRegistry& r);  // nn/cnn_ops_gpu.cc: the convnet ops
Status RegisterDeviceCopyGpuKernels(OpRegistry& r);
Status RegisterMathGpuKernels(OpRegistry& r);
Status RegisterNnGpuKernels(OpRegistry& r);
Status RegisterStateGpuKernels(OpRegistry& r);

}  // namespace tfd::gpu
