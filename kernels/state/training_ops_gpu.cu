// GPU kernels of the optimizer updates: one thread per element.
#include "kernels/state/training_ops_gpu.h"

#include "kernels/gpu/gpu_launch.cuh"

namespace tfd::gpu {
namespace {

template <typename T>
__global__ void GradientDescentKernel(T* var, T alpha, const T* delta, int64_t n) {
  TFD_GPU_LOOP(i, n) var[i] -= alpha * delta[i];
}

template <typename T>
__global__ void MomentumKernel(T* var, T* accum, T lr, const T* grad, T momentum, bool nesterov,
                               int64_t n) {
  TFD_GPU_LOOP(i, n) {
    const T a = accum[i] * momentum + grad[i];
    accum[i] = a;
    var[i] -= nesterov ? grad[i] * lr + a * momentum * lr : lr * a;
  }
}

template <typename T>
__global__ void AdamKernel(T* var, T* m, T* v, T lr_t, T beta1, T beta2, T epsilon, const T* grad,
                           bool nesterov, int64_t n) {
  TFD_GPU_LOOP(i, n) {
    const T g = grad[i];
    const T mi = m[i] + (g - m[i]) * (T(1) - beta1);
    const T vi = v[i] + (g * g - v[i]) * (T(1) - beta2);
    m[i] = mi;
    v[i] = vi;
    const T step = nesterov ? g * (T(1) - beta1) + beta1 * mi : mi;
    var[i] -= lr_t * step / (sqrt(vi) + epsilon);
  }
}

template <typename T>
T Host(const void* p) {
  return *static_cast<const T*>(p);
}

}  // namespace
}  // namespace tfd::gpu

using namespace tfd::gpu;

extern "C" int tfd_gpu_apply_gradient_descent(int type, void* var, const void* alpha,
                                              const void* delta, int64_t n, void* stream) {
  if (n <= 0) return 0;
  TFD_GPU_FLOAT_CASES(type, {
    return Launch(GradientDescentKernel<T>, n, stream, static_cast<T*>(var), Host<T>(alpha),
                  static_cast<const T*>(delta), n);
  })
}

extern "C" int tfd_gpu_apply_momentum(int type, void* var, void* accum, const void* lr,
                                      const void* grad, const void* momentum, int nesterov,
                                      int64_t n, void* stream) {
  if (n <= 0) return 0;
  TFD_GPU_FLOAT_CASES(type, {
    return Launch(MomentumKernel<T>, n, stream, static_cast<T*>(var), static_cast<T*>(accum),
                  Host<T>(lr), static_cast<const T*>(grad), Host<T>(momentum), nesterov != 0, n);
  })
}

extern "C" int tfd_gpu_apply_adam(int type, void* var, void* m, void* v, const void* lr_t,
                                  const void* beta1, const void* beta2, const void* epsilon,
                                  const void* grad, int nesterov, int64_t n, void* stream) {
  if (n <= 0) return 0;
  TFD_GPU_FLOAT_CASES(type, {
    return Launch(AdamKernel<T>, n, stream, static_cast<T*>(var), static_cast<T*>(m),
                  static_cast<T*>(v), Host<T>(lr_t), Host<T>(beta1), Host<T>(beta2),
                  Host<T>(epsilon), static_cast<const T*>(grad), nesterov != 0, n);
  })
}
