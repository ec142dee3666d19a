#include "kernels/gpu/gpu_device.h"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "common/buffer.h"
#include "common/buffer_pool.h"
#include "kernels/gpu/gpu_kernel.h"
#include "kernels/math/matmul_op_gpu.h"

namespace tfd::gpu {
namespace {

std::string CudaError(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

// Small blocks round to 512 bytes, large ones to 2 MiB: few distinct sizes,
// so a training step's tensors find their blocks again every step.
size_t RoundUp(size_t bytes) {
  constexpr size_t kSmall = 512, kLarge = size_t{2} << 20, kLargeFrom = size_t{1} << 20;
  const size_t unit = bytes < kLargeFrom ? kSmall : kLarge;
  return bytes == 0 ? kSmall : (bytes + unit - 1) / unit * unit;
}

std::string FormatGiB(size_t bytes) {
  char s[32];
  std::snprintf(s, sizeof(s), "%.1f GiB", static_cast<double>(bytes) / (1u << 30));
  return s;
}

}  // namespace

// cuBLAS, loaded at run time: a program built here runs where the library
// is missing (it then uses the built-in kernel) and links no 500 MB of it.
// The v2 entry points have kept their ABI across cuBLAS 11 to 13.
struct GpuDevice::Blas {
  using Create = int (*)(void**);
  using SetStream = int (*)(void*, void*);
  using GetVersion = int (*)(void*, int*);
  using Sgemm = int (*)(void*, int, int, int, int, int, const float*, const float*, int,
                        const float*, int, const float*, float*, int);
  using Dgemm = int (*)(void*, int, int, int, int, int, const double*, const double*, int,
                        const double*, int, const double*, double*, int);
  void* handle = nullptr;
  Sgemm sgemm = nullptr;
  Dgemm dgemm = nullptr;
  int version = 0;
  Mutex mu;  // a handle is not for concurrent calls: held around each

  static std::unique_ptr<Blas> Load(void* stream) {
    void* lib = nullptr;
    for (const char* name : {"libcublas.so.13", "libcublas.so.12", "libcublas.so"}) {
      if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
    }
    if (lib == nullptr) return nullptr;
    auto create = reinterpret_cast<Create>(dlsym(lib, "cublasCreate_v2"));
    auto set_stream = reinterpret_cast<SetStream>(dlsym(lib, "cublasSetStream_v2"));
    auto get_version = reinterpret_cast<GetVersion>(dlsym(lib, "cublasGetVersion_v2"));
    auto b = std::make_unique<Blas>();
    b->sgemm = reinterpret_cast<Sgemm>(dlsym(lib, "cublasSgemm_v2"));
    b->dgemm = reinterpret_cast<Dgemm>(dlsym(lib, "cublasDgemm_v2"));
    if (!create || !set_stream || !b->sgemm || !b->dgemm) return nullptr;
    if (create(&b->handle) != 0 || set_stream(b->handle, stream) != 0) return nullptr;
    if (get_version) get_version(b->handle, &b->version);
    return b;
  }
};

GpuDevice::GpuDevice(PrivateKey, int ordinal, void* stream, std::string description)
    : ordinal_(ordinal),
      stream_(stream),
      name_("GPU:" + std::to_string(ordinal)),
      description_(std::move(description)) {
  blas_ = Blas::Load(stream_);
  description_ += blas_ ? ", cuBLAS " + std::to_string(blas_->version)
                        : ", no cuBLAS (built-in matmul)";
}

// Devices live as long as the process: buffers in static objects may still
// hold blocks at exit, so nothing is freed here.
GpuDevice::~GpuDevice() = default;

StatusOr<std::shared_ptr<Buffer>> GpuDevice::Allocate(size_t bytes) {
  const size_t rounded = RoundUp(bytes);
  void* p = nullptr;
  {
    MutexLock lock(mu_);
    auto it = free_.find(rounded);
    if (it != free_.end() && !it->second.empty()) {
      p = it->second.back();
      it->second.pop_back();
      stats_.cached -= rounded;
    }
  }
  if (p == nullptr) {
    cudaSetDevice(ordinal_);
    cudaError_t e = cudaMalloc(&p, rounded);
    if (e == cudaErrorMemoryAllocation) {
      cudaGetLastError();  // clear it, then retry with the cache given back
      FreeCached();
      e = cudaMalloc(&p, rounded);
    }
    if (e != cudaSuccess) {
      cudaGetLastError();
      return errors::ResourceExhausted("cannot allocate ", bytes, " bytes on ", name_, ": ",
                                       CudaError(e));
    }
    MutexLock lock(mu_);
    ++stats_.device_allocs;
  }
  {
    MutexLock lock(mu_);
    stats_.in_use += rounded;
  }
  // allocate_output promises zeros; on the stream this costs no host time.
  if (bytes > 0) {
    TFD_RETURN_IF_ERROR(Check(cudaMemsetAsync(p, 0, bytes, static_cast<cudaStream_t>(stream_)),
                              "zeroing a new tensor"));
  }
  std::shared_ptr<void> owner(p, [this, rounded](void* block) { Release(block, rounded); });
  return Buffer::WrapDevice(p, bytes, this, std::move(owner));
}

StatusOr<std::shared_ptr<Buffer>> GpuDevice::AllocatePinned(size_t bytes) {
  const size_t rounded = RoundUp(bytes);
  void* p = nullptr;
  {
    MutexLock lock(mu_);
    auto it = free_pinned_.find(rounded);
    if (it != free_pinned_.end() && !it->second.empty()) {
      p = it->second.back();
      it->second.pop_back();
    }
  }
  if (p == nullptr) {
    const cudaError_t e = cudaHostAlloc(&p, rounded, cudaHostAllocPortable);
    if (e != cudaSuccess) {
      cudaGetLastError();
      return errors::ResourceExhausted("cannot allocate ", bytes, " bytes of pinned host memory for ",
                                       name_, ": ", CudaError(e));
    }
    MutexLock lock(mu_);
    ++stats_.pinned_allocs;
  }
  std::shared_ptr<void> owner(p, [this, rounded](void* block) { ReleasePinned(block, rounded); });
  return Buffer::Wrap(p, bytes, std::move(owner));
}

void GpuDevice::ReleasePinned(void* p, size_t bytes) {
  MutexLock lock(mu_);
  free_pinned_[bytes].push_back(p);
}

void GpuDevice::Release(void* p, size_t bytes) {
  MutexLock lock(mu_);
  free_[bytes].push_back(p);
  stats_.in_use -= bytes;
  stats_.cached += bytes;
}

void GpuDevice::FreeCached() {
  std::unordered_map<size_t, std::vector<void*>> blocks;
  {
    MutexLock lock(mu_);
    blocks.swap(free_);
    stats_.cached = 0;
  }
  // Blocks may still be in use by work on the stream: let it finish first.
  cudaStreamSynchronize(static_cast<cudaStream_t>(stream_));
  for (auto& [size, list] : blocks) {
    for (void* p : list) cudaFree(p);
  }
}

Status GpuDevice::CopyToHost(void* dst, const void* src, size_t bytes) {
  auto st = static_cast<cudaStream_t>(stream_);
  TFD_RETURN_IF_ERROR(Check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, st),
                            "a copy to the host"));
  return Synchronize();
}

Status GpuDevice::CopyFromHost(void* dst, const void* src, size_t bytes) {
  // From pageable memory this returns once the source has been staged, so
  // the caller may free it at once; from page-locked memory the copy reads
  // `src` later, so it is waited for.
  TFD_RETURN_IF_ERROR(Check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice,
                                            static_cast<cudaStream_t>(stream_)),
                            "a copy from the host"));
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, src) != cudaSuccess) cudaGetLastError();
  return a.type == cudaMemoryTypeHost ? Synchronize() : OkStatus();
}

Status GpuDevice::CopyFromHost(void* dst, const Tensor& src) {
  if (src.total_bytes() == 0) return OkStatus();
  TFD_RETURN_IF_ERROR(Check(cudaMemcpyAsync(dst, src.raw_data(), src.total_bytes(),
                                            cudaMemcpyHostToDevice,
                                            static_cast<cudaStream_t>(stream_)),
                            "a copy from the host"));
  return HoldUntilDone(src.buffer());
}

Status GpuDevice::HoldUntilDone(std::shared_ptr<const void> keep) {
  std::vector<std::shared_ptr<const void>> done;  // dropped after the lock
  void* event = nullptr;
  {
    MutexLock lock(mu_);
    // Events fire in stream order: stop at the first that has not.
    while (!held_.empty() &&
           cudaEventQuery(static_cast<cudaEvent_t>(held_.front().event)) == cudaSuccess) {
      done.push_back(std::move(held_.front().keep));
      free_events_.push_back(held_.front().event);
      held_.pop_front();
    }
    if (!free_events_.empty()) {
      event = free_events_.back();
      free_events_.pop_back();
    }
  }
  cudaGetLastError();  // a query of an event not yet fired leaves cudaErrorNotReady
  if (event == nullptr) {
    cudaEvent_t e = nullptr;
    TFD_RETURN_IF_ERROR(Check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming),
                              "an event for a copy"));
    event = e;
  }
  const cudaError_t recorded =
      cudaEventRecord(static_cast<cudaEvent_t>(event), static_cast<cudaStream_t>(stream_));
  if (recorded != cudaSuccess) {
    cudaGetLastError();
    // Without an event nothing says when the copy has read its source.
    TFD_RETURN_IF_ERROR(Synchronize());
    MutexLock lock(mu_);
    free_events_.push_back(event);
    return OkStatus();
  }
  MutexLock lock(mu_);
  held_.push_back({event, std::move(keep)});
  return OkStatus();
}

Status GpuDevice::CopyOnDevice(void* dst, const void* src, size_t bytes) {
  return Check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice,
                               static_cast<cudaStream_t>(stream_)),
               "a copy on the device");
}

Status GpuDevice::Synchronize() {
  return Check(cudaStreamSynchronize(static_cast<cudaStream_t>(stream_)),
               "the device's queued work");
}

Status GpuDevice::Check(int cuda_error, const std::string& what) const {
  if (cuda_error == 0) return OkStatus();
  const auto e = static_cast<cudaError_t>(cuda_error);
  // Launch configuration and type errors are ours; the rest is the device's.
  if (e == cudaErrorInvalidValue) {
    return errors::InvalidArgument(what, " on ", name_, ": ", CudaError(e));
  }
  return errors::Internal(what, " on ", name_, " failed: ", CudaError(e));
}

Status GpuDevice::MatMul(DType dtype, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                         const void* a, const void* b, void* c) {
  if (m == 0 || n == 0) return OkStatus();
  if (k == 0) return OkStatus();  // the product of empty sums: the zeros c holds
  constexpr int64_t kMaxDim = INT32_MAX;
  if (m > kMaxDim || n > kMaxDim || k > kMaxDim) {
    return errors::InvalidArgument("a ", m, "x", k, " by ", k, "x", n, " product exceeds ", name_,
                                   "'s 2^31 limit per dimension");
  }
  if (!blas_) {
    return Check(tfd_gpu_matmul(GpuType(dtype), ta, tb, m, n, k, a, b, c, stream_), "MatMul");
  }
  // cuBLAS is column-major: a row-major c[m, n] is a column-major c^T[n, m]
  // = op(b)^T op(a)^T, so the operands swap and keep their own transposes.
  constexpr int kN = 0, kT = 1;  // CUBLAS_OP_N, CUBLAS_OP_T
  const int op_a = ta ? kT : kN, op_b = tb ? kT : kN;
  const int lda = static_cast<int>(ta ? m : k), ldb = static_cast<int>(tb ? k : n);
  int r;
  MutexLock lock(blas_->mu);
  if (dtype == DType::kFloat32) {
    const float one = 1, zero = 0;
    r = blas_->sgemm(blas_->handle, op_b, op_a, static_cast<int>(n), static_cast<int>(m),
                     static_cast<int>(k), &one, static_cast<const float*>(b), ldb,
                     static_cast<const float*>(a), lda, &zero, static_cast<float*>(c),
                     static_cast<int>(n));
  } else if (dtype == DType::kFloat64) {
    const double one = 1, zero = 0;
    r = blas_->dgemm(blas_->handle, op_b, op_a, static_cast<int>(n), static_cast<int>(m),
                     static_cast<int>(k), &one, static_cast<const double*>(b), ldb,
                     static_cast<const double*>(a), lda, &zero, static_cast<double*>(c),
                     static_cast<int>(n));
  } else {
    return errors::InvalidArgument("MatMul on ", name_, " takes float32 or float64, not ",
                                   DTypeName(dtype));
  }
  if (r != 0) return errors::Internal("cuBLAS gemm on ", name_, " failed with status ", r);
  return OkStatus();
}

GpuDevice::MemoryStats GpuDevice::memory_stats() const {
  MutexLock lock(mu_);
  return stats_;
}

namespace {

struct Found {
  std::vector<std::unique_ptr<GpuDevice>> owned;
  std::vector<GpuDevice*> devices;
  std::string reason;
};

// Page-locks every block of the host tensor pool (common/buffer_pool.h),
// as TensorFlow's GPU host allocator does: tensors pushed over the data
// plane land in these blocks, and copies between them and the device run
// at the bus's speed with no staging. A block the driver refuses stays
// pageable (slower, still correct). Once per process: the hooks would
// register each block again.
void PageLockHostPool() {
  static std::once_flag once;
  std::call_once(once, [] {
    HostBufferPool().SetBlockHooks(
        [](void* p, size_t n) {
          if (cudaHostRegister(p, n, cudaHostRegisterPortable) != cudaSuccess) cudaGetLastError();
        },
        [](void* p, size_t) {
          if (cudaHostUnregister(p) != cudaSuccess) cudaGetLastError();
        });
  });
}

const Found& Discover() {
  static const Found* found = [] {
    auto* f = new Found;  // lives for the process: kernels may run at exit
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
      cudaGetLastError();
      f->reason = "no usable CUDA device (" + CudaError(e) + ")";
      return f;
    }
    if (count == 0) {
      f->reason = "no CUDA device";
      return f;
    }
    for (int i = 0; i < count; ++i) {
      cudaDeviceProp p{};
      cudaStream_t stream = nullptr;
      if (cudaSetDevice(i) != cudaSuccess || cudaGetDeviceProperties(&p, i) != cudaSuccess ||
          cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
        cudaGetLastError();
        continue;
      }
      std::string description = std::string(p.name) + ", sm_" + std::to_string(p.major) +
                                std::to_string(p.minor) + ", " + FormatGiB(p.totalGlobalMem);
      f->owned.push_back(std::make_unique<GpuDevice>(GpuDevice::PrivateKey{}, i, stream,
                                                     std::move(description)));
      f->devices.push_back(f->owned.back().get());
    }
    if (f->devices.empty()) f->reason = "no CUDA device could be opened";
    return f;
  }();
  return *found;
}

}  // namespace

const std::vector<GpuDevice*>& GpuDevices() { return Discover().devices; }
const std::string& GpuUnavailableReason() { return Discover().reason; }

std::vector<DeviceMemory*> GpuMemories(HostPool host_pool) {
  if (host_pool == HostPool::kPageLocked && !GpuDevices().empty()) PageLockHostPool();
  return std::vector<DeviceMemory*>(GpuDevices().begin(), GpuDevices().end());
}

GpuDevice& GpuDeviceOf(const OpKernelContext& ctx) {
  // Only the executor builds a GPU kernel, and it sets the device first.
  return *static_cast<GpuDevice*>(ctx.node().memory);
}

int GpuType(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return TFD_GPU_F32;
    case DType::kFloat64: return TFD_GPU_F64;
    case DType::kInt32: return TFD_GPU_I32;
    case DType::kInt64: return TFD_GPU_I64;
    case DType::kBool: return TFD_GPU_BOOL;
    default: return -1;
  }
}

Status ShareCpuKernel(OpRegistry& r, const char* op, HostMemory host_memory) {
  TFD_ASSIGN_OR_RETURN(const OpRegistration* reg, r.Lookup(op));
  auto cpu = reg->kernels.find(kDeviceCpu);
  if (cpu == reg->kernels.end()) return errors::Internal("op '", op, "' has no CPU kernel to share");
  return r.RegisterKernel(op, kDeviceGpu, cpu->second, host_memory);
}

StatusOr<int> GpuTypeFor(const OpKernelContext& ctx, const Tensor& t, unsigned allowed) {
  const int type = GpuType(t.dtype());
  if (type < 0 || !(allowed >> type & 1)) {
    return errors::InvalidArgument(ctx.node().op, " has no GPU kernel for ", DTypeName(t.dtype()));
  }
  return type;
}

}  // namespace tfd::gpu
