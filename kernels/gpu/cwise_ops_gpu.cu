// CUDA kernels for float32 Add and Mul of equal-shaped arrays, and their C
// launchers (declared in cwise_ops_gpu.h). Grid-stride loops, so any n fits
// a bounded grid.
#include "kernels/gpu/cwise_ops_gpu.h"

#include <cuda_runtime.h>

namespace {

struct AddOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct MulOp {
  __device__ float operator()(float a, float b) const { return a * b; }
};

template <typename Op>
__global__ void BinaryKernel(const float* a, const float* b, float* out, int64_t n) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = Op()(a[i], b[i]);
  }
}

template <typename Op>
int Launch(const float* a, const float* b, float* out, int64_t n, void* stream) {
  if (n <= 0) return 0;
  constexpr int kThreads = 256;
  // Enough blocks to fill any current GPU; the loop covers the rest.
  constexpr int64_t kMaxBlocks = 4096;
  const int64_t want = (n + kThreads - 1) / kThreads;
  const int blocks = static_cast<int>(want < kMaxBlocks ? want : kMaxBlocks);
  BinaryKernel<Op><<<blocks, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(a, b, out, n);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace

extern "C" int tfd_gpu_add_f32(const float* a, const float* b, float* out, int64_t n,
                               void* stream) {
  return Launch<AddOp>(a, b, out, n, stream);
}

extern "C" int tfd_gpu_mul_f32(const float* a, const float* b, float* out, int64_t n,
                               void* stream) {
  return Launch<MulOp>(a, b, out, n, stream);
}
