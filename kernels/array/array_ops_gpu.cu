// GPU kernels of the array family: Cast and Fill.
#include "kernels/array/array_ops_gpu.h"

#include "kernels/gpu/gpu_launch.cuh"

namespace tfd::gpu {
namespace {

template <typename From, typename To>
__global__ void CastKernel(const From* x, To* y, int64_t n) {
  TFD_GPU_LOOP(i, n) {
    if constexpr (sizeof(To) == 1) {
      y[i] = x[i] != From(0);
    } else {
      y[i] = static_cast<To>(x[i]);
    }
  }
}

template <typename T>
__global__ void FillKernel(T value, T* y, int64_t n) {
  TFD_GPU_LOOP(i, n) y[i] = value;
}

template <typename From, typename To>
int CastTo(const From* in, void* y, int64_t n, cudaStream_t st) {
  return Launch(CastKernel<From, To>, n, st, in, static_cast<To*>(y), n);
}

template <typename From>
int CastFrom(int to, const void* x, void* y, int64_t n, cudaStream_t st) {
  const From* in = static_cast<const From*>(x);
  switch (to) {
    case TFD_GPU_F32: return CastTo<From, float>(in, y, n, st);
    case TFD_GPU_F64: return CastTo<From, double>(in, y, n, st);
    case TFD_GPU_I32: return CastTo<From, int32_t>(in, y, n, st);
    case TFD_GPU_I64: return CastTo<From, int64_t>(in, y, n, st);
    case TFD_GPU_BOOL: return CastTo<From, bool>(in, y, n, st);
    default: return 1;
  }
}

}  // namespace
}  // namespace tfd::gpu

using namespace tfd::gpu;

extern "C" int tfd_gpu_cast(int from, int to, const void* x, void* y, int64_t n, void* stream) {
  if (n <= 0) return 0;
  auto st = static_cast<cudaStream_t>(stream);
  switch (from) {
    case TFD_GPU_F32: return CastFrom<float>(to, x, y, n, st);
    case TFD_GPU_F64: return CastFrom<double>(to, x, y, n, st);
    case TFD_GPU_I32: return CastFrom<int32_t>(to, x, y, n, st);
    case TFD_GPU_I64: return CastFrom<int64_t>(to, x, y, n, st);
    case TFD_GPU_BOOL: return CastFrom<bool>(to, x, y, n, st);
  }
  return 1;
}

extern "C" int tfd_gpu_fill(int type, const void* value, void* y, int64_t n, void* stream) {
  if (n <= 0) return 0;
  auto st = static_cast<cudaStream_t>(stream);
  TFD_GPU_NUMBER_CASES(type, {
    return Launch(FillKernel<T>, n, st, *static_cast<const T*>(value), static_cast<T*>(y), n);
  })
}
