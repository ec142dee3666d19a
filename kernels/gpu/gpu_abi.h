// What the C++ side of the GPU kernels and the .cu launchers agree on: plain
// C, so that the .cu files stay free of Eigen and the runtime's headers and
// the C++ files need no CUDA headers.
//
// Every launcher enqueues its work on `stream` (a cudaStream_t) and returns
// the launch's cudaError_t as an int: 0 on success. Nothing waits for the
// work; a failure while it runs shows at the device's next copy to the host.
#pragma once

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Element types the launchers take.
enum TfdGpuType { TFD_GPU_F32 = 0, TFD_GPU_F64 = 1, TFD_GPU_I32 = 2, TFD_GPU_I64 = 3, TFD_GPU_BOOL = 4 };

// Dimensions a strided launcher handles; the C++ side collapses shapes
// first (BroadcastPlan, ReductionPlan), so real graphs stay far below it.
#define TFD_GPU_MAX_DIMS 8

// A walk over an output of `rank` dims (row-major); strides count elements
// of each input, 0 where that input is repeated.
struct TfdGpuStrides {
  int rank;
  int64_t dims[TFD_GPU_MAX_DIMS];
  int64_t a[TFD_GPU_MAX_DIMS];
  int64_t b[TFD_GPU_MAX_DIMS];
};

#ifdef __cplusplus
}  // extern "C"
#endif
