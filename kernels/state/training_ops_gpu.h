// Launchers of the optimizer updates on GPU variables (conventions in
// kernels/gpu/gpu_abi.h); hyper-parameters arrive as host scalars, in the
// element type. TensorFlow's formulas, as in training_ops.cc.
#pragma once

#include "kernels/gpu/gpu_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

// var -= alpha * delta
int tfd_gpu_apply_gradient_descent(int type, void* var, const void* alpha, const void* delta,
                                   int64_t n, void* stream);
// accum = accum * momentum + grad; var -= lr * accum (or Nesterov's form)
int tfd_gpu_apply_momentum(int type, void* var, void* accum, const void* lr, const void* grad,
                           const void* momentum, int nesterov, int64_t n, void* stream);
// m, v and var as ApplyAdam; `lr_t` is lr * sqrt(1 - beta2^t) / (1 - beta1^t).
int tfd_gpu_apply_adam(int type, void* var, void* m, void* v, const void* lr_t, const void* beta1,
                       const void* beta2, const void* epsilon, const void* grad, int nesterov,
                       int64_t n, void* stream);

#ifdef __cplusplus
}  // extern "C"
#endif
