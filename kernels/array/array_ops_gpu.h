// Launchers of the array family's GPU kernels (conventions in
// kernels/gpu/gpu_abi.h). C++ side: array_ops_gpu.cc.
#pragma once

#include "kernels/gpu/gpu_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

// y[i] = (to)x[i] between any two of f32, f64, i32, i64, bool (to bool:
// x != 0; from floats to integers: truncation, as static_cast).
int tfd_gpu_cast(int from, int to, const void* x, void* y, int64_t n, void* stream);
// y[i] = *value for i < n; `value` is a host pointer to one element of type.
int tfd_gpu_fill(int type, const void* value, void* y, int64_t n, void* stream);

#ifdef __cplusplus
}  // extern "C"
#endif
