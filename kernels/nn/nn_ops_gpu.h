// Launchers of the nn family's GPU kernels (conventions in
// kernels/gpu/gpu_abi.h). All take float types. C++ side: nn_ops_gpu.cc.
#pragma once

#include "kernels/gpu/gpu_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

enum TfdGpuActivation { TFD_GPU_SIGMOID, TFD_GPU_TANH, TFD_GPU_RELU };
enum TfdGpuActivationGrad { TFD_GPU_SIGMOID_GRAD, TFD_GPU_TANH_GRAD, TFD_GPU_RELU_GRAD };

// y = f(x) over n elements.
int tfd_gpu_activation(int op, int type, const void* x, void* y, int64_t n, void* stream);
// out = the gradient from inputs a and b in the order of the op's inputs
// (SigmoidGrad, TanhGrad: y, dy; ReluGrad: gradients, features).
int tfd_gpu_activation_grad(int op, int type, const void* a, const void* b, void* out, int64_t n,
                            void* stream);
// out[r, c] = value[r, c] + bias[c] for rows x cols.
int tfd_gpu_bias_add(int type, const void* value, const void* bias, void* out, int64_t rows,
                     int64_t cols, void* stream);
// out[c] = sum over r of grad[r, c].
int tfd_gpu_bias_add_grad(int type, const void* grad, void* out, int64_t rows, int64_t cols,
                          void* stream);
// Softmax (log_softmax when `log`) of each row of x[rows, cols].
int tfd_gpu_softmax(int type, int log, const void* x, void* y, int64_t rows, int64_t cols,
                    void* stream);
// Cross-entropy of softmax(features) per row and its gradient. Dense: labels
// [rows, cols] of the float type. Sparse: labels [rows] of label_type
// (TFD_GPU_I32 or I64), each in [0, cols) (checked by the caller).
int tfd_gpu_xent(int type, const void* features, const void* labels, void* loss, void* backprop,
                 int64_t rows, int64_t cols, void* stream);
int tfd_gpu_sparse_xent(int type, int label_type, const void* features, const void* labels,
                        void* loss, void* backprop, int64_t rows, int64_t cols, void* stream);

#ifdef __cplusplus
}  // extern "C"
#endif
