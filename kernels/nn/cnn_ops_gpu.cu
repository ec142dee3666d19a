// GPU kernels of the convnet ops: one thread per element of the result,
// each computed by cnn_gpu_math.h (shared with the CPU test of that
// arithmetic). Direct loops, no im2col: correct first.
// TODO(perf): Conv2D and its gradients as im2col + cuBLAS GEMM (the device's
// MatMul), and the filter gradients split over more threads than the
// filter has elements (a small filter leaves most of the GPU idle).
#include "kernels/gpu/gpu_launch.cuh"
#include "kernels/nn/cnn_gpu_math.h"
#include "kernels/nn/cnn_ops_gpu.h"

namespace tfd::gpu {
namespace {

template <typename T>
__global__ void ConvKernel(int op, TfdGpuWindow w, const T* a, const T* b, T* out, int64_t n) {
  TFD_GPU_LOOP(i, n) out[i] = cnn::ConvElement(op, w, a, b, i);
}

template <typename T>
__global__ void PoolKernel(int op, TfdGpuWindow w, const T* a, const T* b, T* out, int64_t n) {
  TFD_GPU_LOOP(i, n) out[i] = cnn::PoolElement(op, w, a, b, i);
}

}  // namespace
}  // namespace tfd::gpu

using namespace tfd::gpu;

extern "C" int tfd_gpu_conv(int op, int type, const TfdGpuWindow* w, const void* a, const void* b,
                            void* out, void* stream) {
  const int64_t n = cnn::ConvResultElements(op, *w);
  if (n <= 0) return 0;
  TFD_GPU_FLOAT_CASES(type, {
    return Launch(ConvKernel<T>, n, stream, op, *w, static_cast<const T*>(a),
                  static_cast<const T*>(b), static_cast<T*>(out), n);
  })
}

extern "C" int tfd_gpu_pool(int op, int type, const TfdGpuWindow* w, const void* a, const void* b,
                            void* out, void* stream) {
  const int64_t n = cnn::PoolResultElements(op, *w);
  if (n <= 0) return 0;
  TFD_GPU_FLOAT_CASES(type, {
    return Launch(PoolKernel<T>, n, stream, op, *w, static_cast<const T*>(a),
                  static_cast<const T*>(b), static_cast<T*>(out), n);
  })
}
