// A build without CUDA: no GPU kernels, no devices, and the reason.
#include "kernels/gpu/gpu_device.h"
#include "kernels/gpu/register_gpu.h"

namespace tfd::gpu {

Status RegisterGpuKernels(OpRegistry&) { return OkStatus(); }

const std::vector<GpuDevice*>& GpuDevices() {
  static const std::vector<GpuDevice*> none;
  return none;
}

const std::string& GpuUnavailableReason() {
  static const std::string reason =
      "this build has no CUDA kernels (nvcc was not found when it was built)";
  return reason;
}

std::vector<DeviceMemory*> GpuMemories() { return {}; }

// No device exists to ask; defined so that code reading the figures of
// GpuDevices()' members links in this build too.
GpuDevice::MemoryStats GpuDevice::memory_stats() const { return {}; }

}  // namespace tfd::gpu
