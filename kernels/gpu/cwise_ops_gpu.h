// Host launchers for the math family's first CUDA kernels: element-wise
// float32 Add and Mul of equal-shaped device arrays. Plain C so that the
// .cu stays free of Eigen and the C++ side needs no CUDA headers.
//
// Nothing calls these yet: the runtime has no GPU device. They are built only
// when nvcc is present (meson option cuda=auto|enabled).
//
//   float *a, *b, *out;  // device pointers, n elements each
//   int err = tfd_gpu_add_f32(a, b, out, n, nullptr);  // 0 on success
#pragma once

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// out[i] = a[i] + b[i] (resp. a[i] * b[i]) for i < n, on `stream` (a
// cudaStream_t; null for the default stream). Returns the launch's
// cudaError_t as an int: 0 on success. out may alias a or b.
int tfd_gpu_add_f32(const float* a, const float* b, float* out, int64_t n, void* stream);
int tfd_gpu_mul_f32(const float* a, const float* b, float* out, int64_t n, void* stream);

#ifdef __cplusplus
}  // extern "C"
#endif
