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

std::vector<DeviceMemory*> GpuMemories(HostPool) { return {}; }

// No GpuDevice is ever made in this build (its constructor is not defined),
// so nothing below runs. The members are defined so that code walking
// GpuDevices() links: the virtual ones also give the class its vtable and
// type info, which UBSan's checks of calls through a GpuDevice* reference.
struct GpuDevice::Blas {};
GpuDevice::~GpuDevice() = default;
GpuDevice::MemoryStats GpuDevice::memory_stats() const { return {}; }

namespace {
Status NoCuda() { return errors::FailedPrecondition(GpuUnavailableReason()); }
}  // namespace

// Every public member: a program that names one (tests/gpu/gpu_kernels_test
// calls MatMul) links here too, and finds GpuDevices() empty at run time.
StatusOr<std::shared_ptr<Buffer>> GpuDevice::Allocate(size_t) { return NoCuda(); }
StatusOr<std::shared_ptr<Buffer>> GpuDevice::AllocatePinned(size_t) { return NoCuda(); }
Status GpuDevice::CopyToHost(void*, const void*, size_t) { return NoCuda(); }
Status GpuDevice::CopyFromHost(void*, const void*, size_t) { return NoCuda(); }
Status GpuDevice::CopyFromHost(void*, const Tensor&) { return NoCuda(); }
Status GpuDevice::CopyOnDevice(void*, const void*, size_t) { return NoCuda(); }
Status GpuDevice::Synchronize() { return NoCuda(); }
Status GpuDevice::Check(int, const std::string&) const { return NoCuda(); }
Status GpuDevice::MatMul(DType, bool, bool, int64_t, int64_t, int64_t, const void*, const void*,
                         void*) {
  return NoCuda();
}

}  // namespace tfd::gpu
