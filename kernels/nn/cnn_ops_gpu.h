// Launchers of the convnet ops' GPU kernels (conventions in
// kernels/gpu/gpu_abi.h): Conv2D, DepthwiseConv2dNative, their input and
// filter gradients, MaxPool, AvgPool and their gradients, NHWC, float32 and
// float64. The per-element arithmetic is in cnn_gpu_math.h; the kernel
// classes, which check shapes and attrs on the host, in cnn_ops_gpu.cc.
#pragma once

#include "kernels/gpu/gpu_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

// One spatial dimension of a windowed op, as window_geometry.h's WindowDim
// computes it: tap k of output o reads input o * stride - pad_before +
// k * dilation, and nothing (the padding) outside [0, in).
struct TfdGpuWindowDim {
  int64_t in, out, window, stride, dilation, pad_before;
};

// An NHWC windowed op: input [batch, rows.in, cols.in, in_depth], output
// [batch, rows.out, cols.out, out_depth]. Conv2D's filter is [rows.window,
// cols.window, in_depth, out_depth]; a depthwise filter [rows.window,
// cols.window, in_depth, out_depth / in_depth]; pooling has out_depth ==
// in_depth.
struct TfdGpuWindow {
  int64_t batch, in_depth, out_depth;
  struct TfdGpuWindowDim rows, cols;
};

enum TfdGpuConv {
  TFD_GPU_CONV2D,              // a = input, b = filter; out = output
  TFD_GPU_CONV2D_INPUT_GRAD,   // a = filter, b = out_backprop; out = input's shape
  TFD_GPU_CONV2D_FILTER_GRAD,  // a = input, b = out_backprop; out = filter's shape
  TFD_GPU_DEPTHWISE,           // as Conv2D's three, for DepthwiseConv2dNative
  TFD_GPU_DEPTHWISE_INPUT_GRAD,
  TFD_GPU_DEPTHWISE_FILTER_GRAD,
};

enum TfdGpuPool {
  TFD_GPU_MAX_POOL,       // a = input; out = output
  TFD_GPU_AVG_POOL,       // a = input; out = output
  TFD_GPU_MAX_POOL_GRAD,  // a = orig_input, b = grad; out = orig_input's shape
  TFD_GPU_AVG_POOL_GRAD,  // b = grad (a unused); out = the original input's shape
};

// Writes every element of `out` (op: a TfdGpuConv) from a and b.
int tfd_gpu_conv(int op, int type, const struct TfdGpuWindow* w, const void* a, const void* b,
                 void* out, void* stream);
// Writes every element of `out` (op: a TfdGpuPool) from a and b.
int tfd_gpu_pool(int op, int type, const struct TfdGpuWindow* w, const void* a, const void* b,
                 void* out, void* stream);

#ifdef __cplusplus
}  // extern "C"
#endif
