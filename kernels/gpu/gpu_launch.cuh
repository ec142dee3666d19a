// Helpers shared by the .cu files: launch geometry and grid-stride loops.
// Device code only; never included by C++ files.
#pragma once

#include <cuda_runtime.h>
#include <stdint.h>

#include "kernels/gpu/gpu_abi.h"

namespace tfd::gpu {

inline constexpr int kThreads = 256;

// Enough blocks to fill any current GPU; grid-stride loops cover the rest.
inline int Blocks(int64_t n) {
  constexpr int64_t kMaxBlocks = 4096;
  const int64_t want = (n + kThreads - 1) / kThreads;
  return static_cast<int>(want < 1 ? 1 : want < kMaxBlocks ? want : kMaxBlocks);
}

inline __device__ int64_t GlobalThread() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
inline __device__ int64_t GridSize() { return static_cast<int64_t>(blockDim.x) * gridDim.x; }

#define TFD_GPU_LOOP(i, n) \
  for (int64_t i = ::tfd::gpu::GlobalThread(); i < (n); i += ::tfd::gpu::GridSize())

inline int LastError() { return static_cast<int>(cudaGetLastError()); }

// Launches `kernel` on `stream` (the cudaStream_t that crosses the C ABI as
// void*) with enough blocks of kThreads for `n` elements (grid-stride loops
// cover the rest) and returns the launch's error code, 0 for none: the one
// way every launcher here starts a kernel.
//
//   return Launch(ScaleKernel<T>, n, stream, static_cast<T*>(x), factor, n);
template <typename... Params, typename... Args>
int Launch(void (*kernel)(Params...), int64_t n, void* stream, Args... args) {
  kernel<<<Blocks(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(args...);
  return LastError();
}

// The offsets into inputs a and b of output element `i` under `s`.
inline __device__ void StridedOffsets(const TfdGpuStrides& s, int64_t i, int64_t* a, int64_t* b) {
  int64_t oa = 0, ob = 0;
  for (int d = s.rank - 1; d >= 0; --d) {
    const int64_t k = i % s.dims[d];
    i /= s.dims[d];
    oa += k * s.a[d];
    ob += k * s.b[d];
  }
  *a = oa;
  *b = ob;
}

}  // namespace tfd::gpu

// Runs the block with T the element type `type`; returns
// cudaErrorInvalidValue (1) for a type outside the list.
// The block (variadic: it may hold commas) must return.
#define TFD_GPU_FLOAT_CASES(type, ...)                \
  switch (type) {                                     \
    case TFD_GPU_F32: { using T = float; __VA_ARGS__ }  \
    case TFD_GPU_F64: { using T = double; __VA_ARGS__ } \
    default: return 1;                                \
  }
#define TFD_GPU_NUMBER_CASES(type, ...)                \
  switch (type) {                                      \
    case TFD_GPU_F32: { using T = float; __VA_ARGS__ }   \
    case TFD_GPU_F64: { using T = double; __VA_ARGS__ }  \
    case TFD_GPU_I32: { using T = int32_t; __VA_ARGS__ } \
    case TFD_GPU_I64: { using T = int64_t; __VA_ARGS__ } \
    default: return 1;                                 \
  }
