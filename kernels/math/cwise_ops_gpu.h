// Launchers of the math family's element-wise GPU kernels (see
// kernels/gpu/gpu_abi.h for the conventions). C++ side: math_ops_gpu.cc.
#pragma once

#include "kernels/gpu/gpu_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

enum TfdGpuUnary {
  TFD_GPU_NEG, TFD_GPU_SQUARE, TFD_GPU_SQRT, TFD_GPU_RSQRT, TFD_GPU_EXP, TFD_GPU_LOG,
  TFD_GPU_ABS, TFD_GPU_RECIPROCAL,
};
enum TfdGpuBinary {
  TFD_GPU_ADD, TFD_GPU_SUB, TFD_GPU_MUL, TFD_GPU_DIV, TFD_GPU_MAXIMUM, TFD_GPU_MINIMUM,
  TFD_GPU_SQUARED_DIFFERENCE,
};

// y[i] = op(x[i]) for i < n; float types.
int tfd_gpu_unary(int op, int type, const void* x, void* y, int64_t n, void* stream);
// z = op(x, y) over n output elements walked by `s` (x is input a, y is b);
// float types, and int32/int64 for all but DIV.
int tfd_gpu_binary(int op, int type, const void* x, const void* y, void* z, int64_t n,
                   const struct TfdGpuStrides* s, void* stream);

#ifdef __cplusplus
}  // extern "C"
#endif
