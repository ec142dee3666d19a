// GPU kernels of the math family's element-wise ops: unary functions and
// broadcasting binary arithmetic (launchers in cwise_ops_gpu.h).
#include "kernels/math/cwise_ops_gpu.h"

#include "kernels/gpu/gpu_launch.cuh"

namespace tfd::gpu {
namespace {

template <typename T>
__device__ T Unary(int op, T x) {
  switch (op) {
    case TFD_GPU_NEG: return -x;
    case TFD_GPU_SQUARE: return x * x;
    case TFD_GPU_SQRT: return sqrt(x);
    case TFD_GPU_RSQRT: return T(1) / sqrt(x);
    case TFD_GPU_EXP: return exp(x);
    case TFD_GPU_LOG: return log(x);
    case TFD_GPU_ABS: return fabs(x);
    case TFD_GPU_RECIPROCAL: return T(1) / x;
  }
  return x;
}

template <typename T>
__device__ T Binary(int op, T a, T b) {
  switch (op) {
    case TFD_GPU_ADD: return a + b;
    case TFD_GPU_SUB: return a - b;
    case TFD_GPU_MUL: return a * b;
    case TFD_GPU_DIV: return a / b;
    // numpy's maximum and minimum: NaN where either side is NaN.
    case TFD_GPU_MAXIMUM: return a > b || a != a ? a : b;
    case TFD_GPU_MINIMUM: return a < b || a != a ? a : b;
    case TFD_GPU_SQUARED_DIFFERENCE: return (a - b) * (a - b);
  }
  return a;
}

template <typename T>
__global__ void UnaryKernel(int op, const T* x, T* y, int64_t n) {
  TFD_GPU_LOOP(i, n) y[i] = Unary<T>(op, x[i]);
}

// The op is a template argument here: the same-shape path is the hot one.
template <typename T>
__global__ void SameShapeKernel(int op, const T* x, const T* y, T* z, int64_t n) {
  TFD_GPU_LOOP(i, n) z[i] = Binary<T>(op, x[i], y[i]);
}

template <typename T>
__global__ void StridedKernel(int op, const T* x, const T* y, T* z, int64_t n, TfdGpuStrides s) {
  TFD_GPU_LOOP(i, n) {
    int64_t a, b;
    StridedOffsets(s, i, &a, &b);
    z[i] = Binary<T>(op, x[a], y[b]);
  }
}

bool SameShape(const TfdGpuStrides& s) {
  return s.rank == 1 && s.a[0] == 1 && s.b[0] == 1;
}

}  // namespace
}  // namespace tfd::gpu

using namespace tfd::gpu;

extern "C" int tfd_gpu_unary(int op, int type, const void* x, void* y, int64_t n, void* stream) {
  if (n <= 0) return 0;
  auto st = static_cast<cudaStream_t>(stream);
  TFD_GPU_FLOAT_CASES(type, {
    return Launch(UnaryKernel<T>, n, st, op, static_cast<const T*>(x), static_cast<T*>(y), n);
  })
}

extern "C" int tfd_gpu_binary(int op, int type, const void* x, const void* y, void* z, int64_t n,
                              const TfdGpuStrides* s, void* stream) {
  if (n <= 0) return 0;
  auto st = static_cast<cudaStream_t>(stream);
  TFD_GPU_NUMBER_CASES(type, {
    if (SameShape(*s)) {
      return Launch(SameShapeKernel<T>, n, st, op, static_cast<const T*>(x),
                    static_cast<const T*>(y), static_cast<T*>(z), n);
    } else {
      return Launch(StridedKernel<T>, n, st, op, static_cast<const T*>(x), static_cast<const T*>(y),
                    static_cast<T*>(z), n, *s);
    }
  })
}
