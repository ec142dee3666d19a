// The arithmetic of the convnet ops' GPU kernels, one output element at a
// time: what thread i of a launch in cnn_ops_gpu.cu computes. Written as
// inline functions that nvcc compiles for the device and a plain C++
// compiler for the host, so that tests/kernels/nn/cnn_gpu_math_test.cc can
// hold every element against the CPU kernels on a machine without a GPU.
//
// Each function follows its CPU kernel's numerics (see conv_gemm.h,
// depthwise_conv_ops.cc, pooling_ops.cc):
//  - Conv2D, its filter gradient and the depthwise forward and filter
//    gradient multiply the padding's zeros (an infinite weight or gradient
//    beside the padding gives NaN, as the CPU's im2col GEMM does); the input
//    gradients drop what falls on the padding.
//  - The gradients are gathers (one thread per element of the result, no
//    atomics), adding the contributions of the output pixels in ascending
//    order as the CPU kernels scatter them, so the results are deterministic.
//  - MaxPool: NaN wins; MaxPoolGrad sends a window's gradient to its first
//    maximum in row-major window order, or its first NaN. AvgPool divides by
//    the number of taps inside the input.
//
//   for (int64_t i = 0; i < ConvResultElements(op, w); ++i)
//     out[i] = ConvElement<float>(op, w, a, b, i);
//
// Thread-safety: pure functions.
#pragma once

#include <math.h>
#include <stdint.h>

#include "kernels/nn/cnn_ops_gpu.h"

#ifdef __CUDACC__
#define TFD_HOST_DEVICE __host__ __device__
#else
#define TFD_HOST_DEVICE
#endif

namespace tfd::gpu::cnn {

// The input index that tap k of output o reads (outside [0, in) on the padding).
TFD_HOST_DEVICE inline int64_t TapAt(const TfdGpuWindowDim& d, int64_t o, int64_t k) {
  return o * d.stride - d.pad_before + k * d.dilation;
}
TFD_HOST_DEVICE inline bool Inside(const TfdGpuWindowDim& d, int64_t i) {
  return i >= 0 && i < d.in;
}
// The output whose tap k reads input i, or -1 when there is none. Walking k
// downwards visits the outputs covering i in ascending order.
TFD_HOST_DEVICE inline int64_t OutputOfTap(const TfdGpuWindowDim& d, int64_t i, int64_t k) {
  const int64_t at = i + d.pad_before - k * d.dilation;
  if (at < 0 || at % d.stride != 0) return -1;
  const int64_t o = at / d.stride;
  return o < d.out ? o : -1;
}
// How many taps of output o fall inside the input.
TFD_HOST_DEVICE inline int64_t InsideTaps(const TfdGpuWindowDim& d, int64_t o) {
  int64_t n = 0;
  for (int64_t k = 0; k < d.window; ++k) n += Inside(d, TapAt(d, o, k)) ? 1 : 0;
  return n;
}

// A flat NHWC index split into image, row, column and channel.
struct Nhwc {
  int64_t n, h, w, c;
};
TFD_HOST_DEVICE inline Nhwc Split(int64_t i, int64_t rows, int64_t cols, int64_t depth) {
  Nhwc at;
  at.c = i % depth;
  i /= depth;
  at.w = i % cols;
  i /= cols;
  at.h = i % rows;
  at.n = i / rows;
  return at;
}
// Flat pixel indices (n, row, col) of the input and of the output.
TFD_HOST_DEVICE inline int64_t InPixel(const TfdGpuWindow& w, int64_t n, int64_t row,
                                       int64_t col) {
  return (n * w.rows.in + row) * w.cols.in + col;
}
TFD_HOST_DEVICE inline int64_t OutPixel(const TfdGpuWindow& w, int64_t n, int64_t row,
                                        int64_t col) {
  return (n * w.rows.out + row) * w.cols.out + col;
}
TFD_HOST_DEVICE inline int64_t Multiplier(const TfdGpuWindow& w) {
  return w.in_depth == 0 ? 0 : w.out_depth / w.in_depth;
}

// Conv2D: output element i.
template <typename T>
TFD_HOST_DEVICE T ConvOutputAt(const TfdGpuWindow& w, const T* input, const T* filter, int64_t i) {
  const Nhwc o = Split(i, w.rows.out, w.cols.out, w.out_depth);
  T sum = T(0);
  for (int64_t kh = 0; kh < w.rows.window; ++kh) {
    const int64_t ih = TapAt(w.rows, o.h, kh);
    for (int64_t kw = 0; kw < w.cols.window; ++kw) {
      const int64_t iw = TapAt(w.cols, o.w, kw);
      const bool inside = Inside(w.rows, ih) && Inside(w.cols, iw);
      const T* x = input + (inside ? InPixel(w, o.n, ih, iw) * w.in_depth : 0);
      const T* f = filter + (kh * w.cols.window + kw) * w.in_depth * w.out_depth + o.c;
      for (int64_t c = 0; c < w.in_depth; ++c) {
        sum += (inside ? x[c] : T(0)) * f[c * w.out_depth];
      }
    }
  }
  return sum;
}

// Conv2DBackpropInput: element i of the input's gradient.
template <typename T>
TFD_HOST_DEVICE T ConvInputGradAt(const TfdGpuWindow& w, const T* filter, const T* grad,
                                  int64_t i) {
  const Nhwc x = Split(i, w.rows.in, w.cols.in, w.in_depth);
  T sum = T(0);
  for (int64_t kh = w.rows.window - 1; kh >= 0; --kh) {
    const int64_t oh = OutputOfTap(w.rows, x.h, kh);
    if (oh < 0) continue;
    for (int64_t kw = w.cols.window - 1; kw >= 0; --kw) {
      const int64_t ow = OutputOfTap(w.cols, x.w, kw);
      if (ow < 0) continue;
      const T* dy = grad + OutPixel(w, x.n, oh, ow) * w.out_depth;
      const T* f = filter + ((kh * w.cols.window + kw) * w.in_depth + x.c) * w.out_depth;
      T tap = T(0);
      for (int64_t od = 0; od < w.out_depth; ++od) tap += dy[od] * f[od];
      sum += tap;
    }
  }
  return sum;
}

// The sum, over every image and output pixel, of the input's tap (kh, kw)
// in channel c times the output's gradient in channel oc: one filter
// element's gradient, for Conv2D and the depthwise convolution alike.
template <typename T>
TFD_HOST_DEVICE T FilterTapSum(const TfdGpuWindow& w, const T* input, const T* grad, int64_t kh,
                               int64_t kw, int64_t c, int64_t oc) {
  T sum = T(0);
  for (int64_t n = 0; n < w.batch; ++n) {
    for (int64_t oh = 0; oh < w.rows.out; ++oh) {
      const int64_t ih = TapAt(w.rows, oh, kh);
      for (int64_t ow = 0; ow < w.cols.out; ++ow) {
        const int64_t iw = TapAt(w.cols, ow, kw);
        const bool inside = Inside(w.rows, ih) && Inside(w.cols, iw);
        const T x = inside ? input[InPixel(w, n, ih, iw) * w.in_depth + c] : T(0);
        sum += x * grad[OutPixel(w, n, oh, ow) * w.out_depth + oc];
      }
    }
  }
  return sum;
}

// Conv2DBackpropFilter: element i of the filter's gradient.
template <typename T>
TFD_HOST_DEVICE T ConvFilterGradAt(const TfdGpuWindow& w, const T* input, const T* grad,
                                   int64_t i) {
  const int64_t od = i % w.out_depth, c = i / w.out_depth % w.in_depth;
  const int64_t tap = i / (w.out_depth * w.in_depth);
  return FilterTapSum(w, input, grad, tap / w.cols.window, tap % w.cols.window, c, od);
}

// DepthwiseConv2dNative: output element i (channel c * multiplier + m).
template <typename T>
TFD_HOST_DEVICE T DepthwiseOutputAt(const TfdGpuWindow& w, const T* input, const T* filter,
                                    int64_t i) {
  const Nhwc o = Split(i, w.rows.out, w.cols.out, w.out_depth);
  const int64_t c = o.c / Multiplier(w);
  T sum = T(0);
  for (int64_t kh = 0; kh < w.rows.window; ++kh) {
    const int64_t ih = TapAt(w.rows, o.h, kh);
    for (int64_t kw = 0; kw < w.cols.window; ++kw) {
      const int64_t iw = TapAt(w.cols, o.w, kw);
      const bool inside = Inside(w.rows, ih) && Inside(w.cols, iw);
      const T x = inside ? input[InPixel(w, o.n, ih, iw) * w.in_depth + c] : T(0);
      sum += x * filter[(kh * w.cols.window + kw) * w.out_depth + o.c];
    }
  }
  return sum;
}

// DepthwiseConv2dNativeBackpropInput: element i of the input's gradient.
template <typename T>
TFD_HOST_DEVICE T DepthwiseInputGradAt(const TfdGpuWindow& w, const T* filter, const T* grad,
                                       int64_t i) {
  const Nhwc x = Split(i, w.rows.in, w.cols.in, w.in_depth);
  const int64_t mult = Multiplier(w);
  T sum = T(0);
  for (int64_t kh = w.rows.window - 1; kh >= 0; --kh) {
    const int64_t oh = OutputOfTap(w.rows, x.h, kh);
    if (oh < 0) continue;
    for (int64_t kw = w.cols.window - 1; kw >= 0; --kw) {
      const int64_t ow = OutputOfTap(w.cols, x.w, kw);
      if (ow < 0) continue;
      const T* dy = grad + OutPixel(w, x.n, oh, ow) * w.out_depth + x.c * mult;
      const T* f = filter + (kh * w.cols.window + kw) * w.out_depth + x.c * mult;
      T tap = T(0);
      for (int64_t m = 0; m < mult; ++m) tap += dy[m] * f[m];
      sum += tap;
    }
  }
  return sum;
}

// DepthwiseConv2dNativeBackpropFilter: element i of the filter's gradient
// ([rows.window, cols.window, out_depth] flat).
template <typename T>
TFD_HOST_DEVICE T DepthwiseFilterGradAt(const TfdGpuWindow& w, const T* input, const T* grad,
                                        int64_t i) {
  const int64_t oc = i % w.out_depth, c = oc / Multiplier(w), tap = i / w.out_depth;
  return FilterTapSum(w, input, grad, tap / w.cols.window, tap % w.cols.window, c, oc);
}

// MaxPool: output element i; -inf for a window with no tap inside the input.
template <typename T>
TFD_HOST_DEVICE T MaxPoolAt(const TfdGpuWindow& w, const T* input, int64_t i) {
  const Nhwc o = Split(i, w.rows.out, w.cols.out, w.out_depth);
  T best = static_cast<T>(-HUGE_VAL);
  for (int64_t kh = 0; kh < w.rows.window; ++kh) {
    const int64_t ih = TapAt(w.rows, o.h, kh);
    if (!Inside(w.rows, ih)) continue;
    for (int64_t kw = 0; kw < w.cols.window; ++kw) {
      const int64_t iw = TapAt(w.cols, o.w, kw);
      if (!Inside(w.cols, iw)) continue;
      const T v = input[InPixel(w, o.n, ih, iw) * w.in_depth + o.c];
      best = (v > best || v != v) ? v : best;
    }
  }
  return best;
}

// AvgPool: output element i, the mean over the window's taps inside the input.
template <typename T>
TFD_HOST_DEVICE T AvgPoolAt(const TfdGpuWindow& w, const T* input, int64_t i) {
  const Nhwc o = Split(i, w.rows.out, w.cols.out, w.out_depth);
  T sum = T(0);
  for (int64_t kh = 0; kh < w.rows.window; ++kh) {
    const int64_t ih = TapAt(w.rows, o.h, kh);
    if (!Inside(w.rows, ih)) continue;
    for (int64_t kw = 0; kw < w.cols.window; ++kw) {
      const int64_t iw = TapAt(w.cols, o.w, kw);
      if (Inside(w.cols, iw)) sum += input[InPixel(w, o.n, ih, iw) * w.in_depth + o.c];
    }
  }
  return sum / static_cast<T>(InsideTaps(w.rows, o.h) * InsideTaps(w.cols, o.w));
}

// The input pixel (row * cols.in + col) that MaxPoolGrad credits with output
// pixel (n, oh, ow)'s gradient in channel c: the first maximum in row-major
// window order, or the first NaN; -1 when no tap is inside the input.
template <typename T>
TFD_HOST_DEVICE int64_t MaxPoolArgMax(const TfdGpuWindow& w, const T* input, int64_t n, int64_t oh,
                                      int64_t ow, int64_t c) {
  int64_t arg = -1;
  T best = T(0);
  for (int64_t kh = 0; kh < w.rows.window; ++kh) {
    const int64_t ih = TapAt(w.rows, oh, kh);
    if (!Inside(w.rows, ih)) continue;
    for (int64_t kw = 0; kw < w.cols.window; ++kw) {
      const int64_t iw = TapAt(w.cols, ow, kw);
      if (!Inside(w.cols, iw)) continue;
      const T v = input[InPixel(w, n, ih, iw) * w.in_depth + c];
      if (arg < 0 || v > best || (v != v && best == best)) {
        best = v;
        arg = ih * w.cols.in + iw;
      }
    }
  }
  return arg;
}

// MaxPoolGrad: element i of orig_input's gradient, the gradients of the
// windows whose maximum it is.
template <typename T>
TFD_HOST_DEVICE T MaxPoolGradAt(const TfdGpuWindow& w, const T* input, const T* grad, int64_t i) {
  const Nhwc x = Split(i, w.rows.in, w.cols.in, w.in_depth);
  const int64_t self = x.h * w.cols.in + x.w;
  T sum = T(0);
  for (int64_t kh = w.rows.window - 1; kh >= 0; --kh) {
    const int64_t oh = OutputOfTap(w.rows, x.h, kh);
    if (oh < 0) continue;
    for (int64_t kw = w.cols.window - 1; kw >= 0; --kw) {
      const int64_t ow = OutputOfTap(w.cols, x.w, kw);
      if (ow < 0 || MaxPoolArgMax(w, input, x.n, oh, ow, x.c) != self) continue;
      sum += grad[OutPixel(w, x.n, oh, ow) * w.out_depth + x.c];
    }
  }
  return sum;
}

// AvgPoolGrad: element i of the original input's gradient, each covering
// window's gradient divided by that window's taps inside the input.
template <typename T>
TFD_HOST_DEVICE T AvgPoolGradAt(const TfdGpuWindow& w, const T* grad, int64_t i) {
  const Nhwc x = Split(i, w.rows.in, w.cols.in, w.in_depth);
  T sum = T(0);
  for (int64_t kh = w.rows.window - 1; kh >= 0; --kh) {
    const int64_t oh = OutputOfTap(w.rows, x.h, kh);
    if (oh < 0) continue;
    for (int64_t kw = w.cols.window - 1; kw >= 0; --kw) {
      const int64_t ow = OutputOfTap(w.cols, x.w, kw);
      if (ow < 0) continue;
      const T count = static_cast<T>(InsideTaps(w.rows, oh) * InsideTaps(w.cols, ow));
      sum += grad[OutPixel(w, x.n, oh, ow) * w.out_depth + x.c] / count;
    }
  }
  return sum;
}

TFD_HOST_DEVICE inline int64_t InputElements(const TfdGpuWindow& w) {
  return w.batch * w.rows.in * w.cols.in * w.in_depth;
}
TFD_HOST_DEVICE inline int64_t OutputElements(const TfdGpuWindow& w) {
  return w.batch * w.rows.out * w.cols.out * w.out_depth;
}

// The number of elements `op` (a TfdGpuConv) writes.
TFD_HOST_DEVICE inline int64_t ConvResultElements(int op, const TfdGpuWindow& w) {
  const int64_t taps = w.rows.window * w.cols.window;
  switch (op) {
    case TFD_GPU_CONV2D_INPUT_GRAD:
    case TFD_GPU_DEPTHWISE_INPUT_GRAD: return InputElements(w);
    case TFD_GPU_CONV2D_FILTER_GRAD: return taps * w.in_depth * w.out_depth;
    case TFD_GPU_DEPTHWISE_FILTER_GRAD: return taps * w.out_depth;
    default: return OutputElements(w);
  }
}

// Element i of `op`'s result from its operands a and b (tfd_gpu_conv's).
template <typename T>
TFD_HOST_DEVICE T ConvElement(int op, const TfdGpuWindow& w, const T* a, const T* b, int64_t i) {
  switch (op) {
    case TFD_GPU_CONV2D_INPUT_GRAD: return ConvInputGradAt(w, a, b, i);
    case TFD_GPU_CONV2D_FILTER_GRAD: return ConvFilterGradAt(w, a, b, i);
    case TFD_GPU_DEPTHWISE: return DepthwiseOutputAt(w, a, b, i);
    case TFD_GPU_DEPTHWISE_INPUT_GRAD: return DepthwiseInputGradAt(w, a, b, i);
    case TFD_GPU_DEPTHWISE_FILTER_GRAD: return DepthwiseFilterGradAt(w, a, b, i);
    default: return ConvOutputAt(w, a, b, i);
  }
}

// The number of elements `op` (a TfdGpuPool) writes.
TFD_HOST_DEVICE inline int64_t PoolResultElements(int op, const TfdGpuWindow& w) {
  return op == TFD_GPU_MAX_POOL_GRAD || op == TFD_GPU_AVG_POOL_GRAD ? InputElements(w)
                                                                    : OutputElements(w);
}

// Element i of `op`'s result from its operands a and b (tfd_gpu_pool's).
template <typename T>
TFD_HOST_DEVICE T PoolElement(int op, const TfdGpuWindow& w, const T* a, const T* b, int64_t i) {
  switch (op) {
    case TFD_GPU_AVG_POOL: return AvgPoolAt(w, a, i);
    case TFD_GPU_MAX_POOL_GRAD: return MaxPoolGradAt(w, a, b, i);
    case TFD_GPU_AVG_POOL_GRAD: return AvgPoolGradAt(w, b, i);
    default: return MaxPoolAt(w, a, i);
  }
}

}  // namespace tfd::gpu::cnn
