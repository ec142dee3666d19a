// Launchers of the math family's GPU reductions (conventions in
// kernels/gpu/gpu_abi.h). The input is described collapsed, as
// ReductionPlan gives it: `dims` with a mask of the reduced ones.
#pragma once

#include "kernels/gpu/gpu_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

enum TfdGpuReduce { TFD_GPU_SUM, TFD_GPU_MEAN };

// y[out_count] = reduce over the reduced dims of x (rank <= TFD_GPU_MAX_DIMS,
// reduced[d] != 0 for a reduced dim); MEAN divides by reduce_count. Float
// types, and int32/int64 for all but MEAN.
int tfd_gpu_reduce(int op, int type, const void* x, void* y, int rank, const int64_t* dims,
                   const int* reduced, int64_t out_count, int64_t reduce_count, void* stream);

// out[o, i] = the index along the middle dim of x[outer, axis, inner] of
// its largest element (the first of equal ones), as int32 or int64
// (out_type). Float types.
int tfd_gpu_argmax(int type, int out_type, const void* x, void* out, int64_t outer, int64_t axis,
                   int64_t inner, void* stream);

#ifdef __cplusplus
}  // extern "C"
#endif
