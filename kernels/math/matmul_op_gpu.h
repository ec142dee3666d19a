// Launcher of the built-in GPU matrix product, used where cuBLAS cannot be
// loaded (kernels/gpu/gpu_device.h says which runs). Conventions in
// kernels/gpu/gpu_abi.h.
#pragma once

#include "kernels/gpu/gpu_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

// c[m, n] = op(a) op(b), row-major, op transposing when ta (tb) is set:
// a is [m, k] or, transposed, [k, m]; b is [k, n] or [n, k]. Float types.
int tfd_gpu_matmul(int type, int ta, int tb, int64_t m, int64_t n, int64_t k, const void* a,
                   const void* b, void* c, void* stream);

#ifdef __cplusplus
}  // extern "C"
#endif
