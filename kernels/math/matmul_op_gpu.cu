// The built-in GPU matrix product: 16x16 tiles through shared memory. A
// fallback for hosts whose cuBLAS cannot be loaded, not a rival to it.
#include "kernels/math/matmul_op_gpu.h"

#include "kernels/gpu/gpu_launch.cuh"

namespace tfd::gpu {
namespace {

constexpr int kTile = 16;

template <typename T>
__global__ void MatMulKernel(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a,
                             const T* b, T* c) {
  __shared__ T as[kTile][kTile];
  __shared__ T bs[kTile][kTile];
  const int64_t row = static_cast<int64_t>(blockIdx.y) * kTile + threadIdx.y;
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kTile + threadIdx.x;
  T sum = 0;
  for (int64_t t = 0; t < k; t += kTile) {
    const int64_t ak = t + threadIdx.x, bk = t + threadIdx.y;
    as[threadIdx.y][threadIdx.x] =
        row < m && ak < k ? (ta ? a[ak * m + row] : a[row * k + ak]) : T(0);
    bs[threadIdx.y][threadIdx.x] =
        col < n && bk < k ? (tb ? b[col * k + bk] : b[bk * n + col]) : T(0);
    __syncthreads();
    for (int i = 0; i < kTile; ++i) sum += as[threadIdx.y][i] * bs[i][threadIdx.x];
    __syncthreads();
  }
  if (row < m && col < n) c[row * n + col] = sum;
}

}  // namespace
}  // namespace tfd::gpu

using namespace tfd::gpu;

extern "C" int tfd_gpu_matmul(int type, int ta, int tb, int64_t m, int64_t n, int64_t k,
                              const void* a, const void* b, void* c, void* stream) {
  if (m <= 0 || n <= 0) return 0;
  const dim3 threads(kTile, kTile);
  const dim3 blocks(static_cast<unsigned>((n + kTile - 1) / kTile),
                    static_cast<unsigned>((m + kTile - 1) / kTile));
  auto st = static_cast<cudaStream_t>(stream);
  TFD_GPU_FLOAT_CASES(type, {
    MatMulKernel<T><<<blocks, threads, 0, st>>>(ta != 0, tb != 0, m, n, k,
                                                static_cast<const T*>(a),
                                                static_cast<const T*>(b), static_cast<T*>(c));
    return LastError();
  })
}
