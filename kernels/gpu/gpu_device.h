// GpuDevice: one CUDA device as the runtime uses it — a stream on which
// every kernel of the device runs in order, a caching allocator of device
// memory, copies to and from the host, and matrix products (cuBLAS, loaded
// at run time, or a built-in kernel where it cannot be loaded).
//
// One stream per device keeps the ordering simple: a kernel's inputs were
// enqueued before it (the executor starts it after its producers), a freed
// block is reused only by work enqueued later, and the host sees a result
// only through CopyToHost, which waits for the stream. Nothing else blocks.
//
//   for (GpuDevice* d : GpuDevices()) ...;       // found on first use
//   if (GpuDevices().empty()) log(GpuUnavailableReason());
//   GpuDevice& dev = GpuDeviceOf(ctx);           // in a GPU kernel
//   TFD_OP_REQUIRES_OK(ctx, dev.Check(tfd_gpu_add(..., dev.stream()), "Add"));
//
// Built only where nvcc is; elsewhere GpuDevices() is empty and
// GpuUnavailableReason() says the build has no CUDA.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/device_memory.h"
#include "common/dtype.h"
#include "common/mutex.h"
#include "common/op_kernel.h"

namespace tfd::gpu {

class GpuDevice final : public DeviceMemory {
 public:
  struct MemoryStats {
    uint64_t in_use = 0;       // bytes held by live tensors
    uint64_t cached = 0;       // bytes kept for reuse
    uint64_t device_allocs = 0;  // cudaMalloc calls so far
    uint64_t pinned_allocs = 0;  // cudaHostAlloc calls so far
  };

  // Use GpuDevices(); the key keeps construction in this file's .cc.
  struct PrivateKey {};
  GpuDevice(PrivateKey, int ordinal, void* stream, std::string description);
  ~GpuDevice() override;

  int ordinal() const { return ordinal_; }
  const std::string& name() const override { return name_; }
  // "NVIDIA H200, sm_90, 139.8 GiB, cuBLAS 13.1" — for status and logs.
  const std::string& description() const { return description_; }
  void* stream() const { return stream_; }  // a cudaStream_t

  StatusOr<std::shared_ptr<Buffer>> Allocate(size_t bytes) override;
  // `bytes` of page-locked host memory (a host buffer: host code reads it,
  // _Send sends from it), cached as device blocks are: copies between it
  // and the device run at the bus's speed with no staging by the driver.
  // Not zero-filled: for a copy's destination.
  StatusOr<std::shared_ptr<Buffer>> AllocatePinned(size_t bytes);
  Status CopyToHost(void* dst, const void* src, size_t bytes) override;
  // From page-locked memory this waits for the copy (the caller may free
  // `src` on return); use the Tensor overload, which does not.
  Status CopyFromHost(void* dst, const void* src, size_t bytes) override;
  // Enqueues a copy of host tensor `src` to `dst` and returns: `src`'s
  // buffer is kept until the copy has run, so the caller may drop it at
  // once, and the copy runs at the bus's speed when the buffer is
  // page-locked (the host pool's blocks are, in a process with a GPU).
  Status CopyFromHost(void* dst, const Tensor& src);
  Status CopyOnDevice(void* dst, const void* src, size_t bytes) override;
  // Waits until everything enqueued so far has run; the first error of it.
  Status Synchronize();

  // A launcher's result (kernels/gpu/gpu_abi.h) as a Status naming `what`
  // and this device.
  Status Check(int cuda_error, const std::string& what) const;

  // c[m, n] = op(a) op(b), row-major, of float32 or float64 on this device.
  Status MatMul(DType dtype, bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k,
                const void* a, const void* b, void* c);
  // True when MatMul uses cuBLAS (else the built-in tiled kernel).
  bool has_cublas() const { return blas_ != nullptr; }

  MemoryStats memory_stats() const;

 private:
  struct Blas;
  // Give a block back to its cache (the buffer's owner calls them).
  void Release(void* p, size_t bytes);
  void ReleasePinned(void* p, size_t bytes);
  // Frees the cached blocks (before a retry when the device is full).
  void FreeCached();
  // Keeps `keep` until the work enqueued so far has run (an event on the
  // stream); drops what earlier calls kept and is no longer needed.
  Status HoldUntilDone(std::shared_ptr<const void> keep);

  const int ordinal_;
  void* const stream_;
  const std::string name_;
  std::string description_;
  std::unique_ptr<Blas> blas_;
  mutable Mutex mu_;
  // Free blocks by rounded size, of device and of pinned host memory.
  std::unordered_map<size_t, std::vector<void*>> free_ GUARDED_BY(mu_);
  std::unordered_map<size_t, std::vector<void*>> free_pinned_ GUARDED_BY(mu_);
  MemoryStats stats_ GUARDED_BY(mu_);
  // Host buffers that enqueued copies read, oldest first, each with the
  // event (a cudaEvent_t) recorded after its copy; and spent events.
  struct Held {
    void* event;
    std::shared_ptr<const void> keep;
  };
  std::deque<Held> held_ GUARDED_BY(mu_);
  std::vector<void*> free_events_ GUARDED_BY(mu_);
};

// The usable GPUs of this process, found on first call (GPU:i is [i]).
const std::vector<GpuDevice*>& GpuDevices();
// Why GpuDevices() is empty: no CUDA in this build, no device, a driver
// too old for the CUDA runtime this was built with. Empty when it is not.
const std::string& GpuUnavailableReason();
// What GpuMemories() does to the host tensor pool (common/buffer_pool.h).
enum class HostPool { kPageLocked, kPageable };
// The same devices as the runtime's KernelEnv::gpus wants them. Where there
// is a GPU, kPageLocked also page-locks every block of the host tensor pool
// from then on, for the rest of the process (a later kPageable does not
// undo it): tensors pushed over the data plane land in those blocks, and
// copies between them and the device run at the bus's speed. kPageable is
// for measuring what that gains (tfd --pin-host-buffers 0).
std::vector<DeviceMemory*> GpuMemories(HostPool host_pool = HostPool::kPageLocked);

// The device a GPU kernel runs on (its NodeInfo::memory).
GpuDevice& GpuDeviceOf(const OpKernelContext& ctx);

// The launcher element type of `dtype` (gpu_abi.h's TfdGpuType), or -1.
int GpuType(DType dtype);

}  // namespace tfd::gpu
