// GPU kernels of the nn family: activations and their gradients, BiasAdd and
// its gradient, Softmax and the softmax cross-entropies. Row-wise ops use one
// thread per row: a classifier's rows are short (10 classes for MNIST).
#include "kernels/nn/nn_ops_gpu.h"

#include "kernels/gpu/gpu_launch.cuh"

namespace tfd::gpu {
namespace {

template <typename T>
__global__ void ActivationKernel(int op, const T* x, T* y, int64_t n) {
  TFD_GPU_LOOP(i, n) {
    const T v = x[i];
    switch (op) {
      case TFD_GPU_SIGMOID: y[i] = T(1) / (T(1) + exp(-v)); break;
      case TFD_GPU_TANH: y[i] = tanh(v); break;
      default: y[i] = v > T(0) || v != v ? v : T(0); break;  // Relu: NaN stays NaN
    }
  }
}

template <typename T>
__global__ void ActivationGradKernel(int op, const T* a, const T* b, T* out, int64_t n) {
  TFD_GPU_LOOP(i, n) {
    switch (op) {
      case TFD_GPU_SIGMOID_GRAD: out[i] = b[i] * a[i] * (T(1) - a[i]); break;
      case TFD_GPU_TANH_GRAD: out[i] = b[i] * (T(1) - a[i] * a[i]); break;
      default: out[i] = b[i] > T(0) ? a[i] : T(0); break;
    }
  }
}

template <typename T>
__global__ void BiasAddKernel(const T* value, const T* bias, T* out, int64_t rows, int64_t cols) {
  TFD_GPU_LOOP(i, rows * cols) out[i] = value[i] + bias[i % cols];
}

template <typename T>
__global__ void BiasAddGradKernel(const T* grad, T* out, int64_t rows, int64_t cols) {
  TFD_GPU_LOOP(c, cols) {
    T sum = 0;
    for (int64_t r = 0; r < rows; ++r) sum += grad[r * cols + c];
    out[c] = sum;
  }
}

// Each row's maximum and log(sum(exp(x - max))).
template <typename T>
__device__ void RowStats(const T* x, int64_t cols, T* max, T* lse) {
  T m = x[0];
  for (int64_t c = 1; c < cols; ++c) m = x[c] > m ? x[c] : m;
  T sum = 0;
  for (int64_t c = 0; c < cols; ++c) sum += exp(x[c] - m);
  *max = m;
  *lse = log(sum);
}

template <typename T>
__global__ void SoftmaxKernel(bool log_softmax, const T* x, T* y, int64_t rows, int64_t cols) {
  TFD_GPU_LOOP(r, rows) {
    const T* in = x + r * cols;
    T* out = y + r * cols;
    T max, lse;
    RowStats(in, cols, &max, &lse);
    for (int64_t c = 0; c < cols; ++c) {
      const T shifted = in[c] - max - lse;
      out[c] = log_softmax ? shifted : exp(shifted);
    }
  }
}

template <typename T>
__global__ void XentKernel(const T* features, const T* labels, T* loss, T* backprop, int64_t rows,
                           int64_t cols) {
  TFD_GPU_LOOP(r, rows) {
    const T* f = features + r * cols;
    const T* l = labels + r * cols;
    T max, lse;
    RowStats(f, cols, &max, &lse);
    T sum = 0;
    for (int64_t c = 0; c < cols; ++c) {
      const T shifted = f[c] - max;
      sum += l[c] * (lse - shifted);
      backprop[r * cols + c] = exp(shifted - lse) - l[c];
    }
    loss[r] = sum;
  }
}

template <typename T, typename L>
__global__ void SparseXentKernel(const T* features, const L* labels, T* loss, T* backprop,
                                 int64_t rows, int64_t cols) {
  TFD_GPU_LOOP(r, rows) {
    const T* f = features + r * cols;
    const int64_t label = static_cast<int64_t>(labels[r]);
    T max, lse;
    RowStats(f, cols, &max, &lse);
    for (int64_t c = 0; c < cols; ++c) {
      const T shifted = f[c] - max;
      backprop[r * cols + c] = exp(shifted - lse) - (c == label ? T(1) : T(0));
    }
    loss[r] = lse - (f[label] - max);
  }
}

}  // namespace
}  // namespace tfd::gpu

using namespace tfd::gpu;

extern "C" int tfd_gpu_activation(int op, int type, const void* x, void* y, int64_t n,
                                  void* stream) {
  if (n <= 0) return 0;
  TFD_GPU_FLOAT_CASES(type, {
    return Launch(ActivationKernel<T>, n, stream, op, static_cast<const T*>(x), static_cast<T*>(y),
                  n);
  })
}

extern "C" int tfd_gpu_activation_grad(int op, int type, const void* a, const void* b, void* out,
                                       int64_t n, void* stream) {
  if (n <= 0) return 0;
  TFD_GPU_FLOAT_CASES(type, {
    return Launch(ActivationGradKernel<T>, n, stream, op, static_cast<const T*>(a),
                  static_cast<const T*>(b), static_cast<T*>(out), n);
  })
}

extern "C" int tfd_gpu_bias_add(int type, const void* value, const void* bias, void* out,
                                int64_t rows, int64_t cols, void* stream) {
  const int64_t n = rows * cols;
  if (n <= 0) return 0;
  TFD_GPU_FLOAT_CASES(type, {
    return Launch(BiasAddKernel<T>, n, stream, static_cast<const T*>(value),
                  static_cast<const T*>(bias), static_cast<T*>(out), rows, cols);
  })
}

extern "C" int tfd_gpu_bias_add_grad(int type, const void* grad, void* out, int64_t rows,
                                     int64_t cols, void* stream) {
  if (cols <= 0) return 0;
  TFD_GPU_FLOAT_CASES(type, {
    return Launch(BiasAddGradKernel<T>, cols, stream, static_cast<const T*>(grad),
                  static_cast<T*>(out), rows, cols);
  })
}

extern "C" int tfd_gpu_softmax(int type, int log, const void* x, void* y, int64_t rows,
                               int64_t cols, void* stream) {
  if (rows <= 0 || cols <= 0) return 0;
  TFD_GPU_FLOAT_CASES(type, {
    return Launch(SoftmaxKernel<T>, rows, stream, log != 0, static_cast<const T*>(x),
                  static_cast<T*>(y), rows, cols);
  })
}

extern "C" int tfd_gpu_xent(int type, const void* features, const void* labels, void* loss,
                            void* backprop, int64_t rows, int64_t cols, void* stream) {
  if (rows <= 0 || cols <= 0) return 0;
  TFD_GPU_FLOAT_CASES(type, {
    return Launch(XentKernel<T>, rows, stream, static_cast<const T*>(features),
                  static_cast<const T*>(labels), static_cast<T*>(loss), static_cast<T*>(backprop),
                  rows, cols);
  })
}

extern "C" int tfd_gpu_sparse_xent(int type, int label_type, const void* features,
                                   const void* labels, void* loss, void* backprop, int64_t rows,
                                   int64_t cols, void* stream) {
  if (rows <= 0 || cols <= 0) return 0;
  auto st = static_cast<cudaStream_t>(stream);
  TFD_GPU_FLOAT_CASES(type, {
    if (label_type == TFD_GPU_I32) {
      return Launch(SparseXentKernel<T, int32_t>, rows, st, static_cast<const T*>(features),
                    static_cast<const int32_t*>(labels), static_cast<T*>(loss),
                    static_cast<T*>(backprop), rows, cols);
    } else {
      return Launch(SparseXentKernel<T, int64_t>, rows, st, static_cast<const T*>(features),
                    static_cast<const int64_t*>(labels), static_cast<T*>(loss),
                    static_cast<T*>(backprop), rows, cols);
    }
  })
}
