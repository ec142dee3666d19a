// The nn family's GPU kernels: Sigmoid, Tanh, Relu and their gradients,
// BiasAdd and BiasAddGrad, Softmax and LogSoftmax, and the two softmax
// cross-entropies. Checks as the CPU kernels'; arithmetic in nn_ops_gpu.cu.
#include <string>

#include "kernels/gpu/gpu_kernel.h"
#include "kernels/gpu/register_gpu.h"
#include "kernels/nn/nn_ops_gpu.h"

namespace tfd::gpu {
namespace {

// Everything but the last dimension, flattened.
int64_t Rows(const TensorShape& s) {
  int64_t rows = 1;
  for (int i = 0; i + 1 < s.rank(); ++i) rows *= s.dim(i);
  return rows;
}

template <int kOp>
class ActivationGpuOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    auto type = GpuTypeFor(ctx, x, kGpuFloats);
    TFD_OP_REQUIRES_OK(ctx, type.status());
    Tensor* y = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, x.shape(), &y));
    GpuDevice& dev = GpuDeviceOf(ctx);
    TFD_GPU_LAUNCH(ctx, dev, tfd_gpu_activation(kOp, *type, x.raw_data(), y->raw_data(),
                                                x.num_elements(), dev.stream()));
  }
};

template <int kOp>
class ActivationGradGpuOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    auto type = GpuTypeFor(ctx, a, kGpuFloats);
    TFD_OP_REQUIRES_OK(ctx, type.status());
    TFD_OP_REQUIRES(ctx, a.shape() == b.shape(),
                    errors::InvalidArgument(node().op, " inputs must have the same shape, got ",
                                            a.shape().ToString(), " and ", b.shape().ToString()));
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, a.shape(), &out));
    GpuDevice& dev = GpuDeviceOf(ctx);
    TFD_GPU_LAUNCH(ctx, dev, tfd_gpu_activation_grad(kOp, *type, a.raw_data(), b.raw_data(),
                                                     out->raw_data(), a.num_elements(),
                                                     dev.stream()));
  }
};

class BiasAddGpuOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    const Tensor& value = ctx.input(0);
    const Tensor& bias = ctx.input(1);
    auto type = GpuTypeFor(ctx, value, kGpuFloats);
    TFD_OP_REQUIRES_OK(ctx, type.status());
    TFD_OP_REQUIRES(ctx, value.rank() >= 2,
                    errors::InvalidArgument("value must have rank >= 2 but has shape ",
                                            value.shape().ToString()));
    TFD_OP_REQUIRES(ctx, bias.rank() == 1 && bias.dim(0) == value.dim(value.rank() - 1),
                    errors::InvalidArgument("bias ", bias.shape().ToString(),
                                            " must be a vector as long as the last dimension of ",
                                            value.shape().ToString()));
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, value.shape(), &out));
    GpuDevice& dev = GpuDeviceOf(ctx);
    TFD_GPU_LAUNCH(ctx, dev, tfd_gpu_bias_add(*type, value.raw_data(), bias.raw_data(),
                                              out->raw_data(), Rows(value.shape()),
                                              bias.dim(0), dev.stream()));
  }
};

class BiasAddGradGpuOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    const Tensor& grad = ctx.input(0);
    auto type = GpuTypeFor(ctx, grad, kGpuFloats);
    TFD_OP_REQUIRES_OK(ctx, type.status());
    TFD_OP_REQUIRES(ctx, grad.rank() >= 2,
                    errors::InvalidArgument("out_backprop must have rank >= 2 but has shape ",
                                            grad.shape().ToString()));
    const int64_t cols = grad.dim(grad.rank() - 1);
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, TensorShape({cols}), &out));
    GpuDevice& dev = GpuDeviceOf(ctx);
    TFD_GPU_LAUNCH(ctx, dev, tfd_gpu_bias_add_grad(*type, grad.raw_data(), out->raw_data(),
                                                   Rows(grad.shape()), cols, dev.stream()));
  }
};

class SoftmaxGpuOp : public OpKernel {
 public:
  explicit SoftmaxGpuOp(OpKernelConstruction& c)
      : OpKernel(c), log_(c.def().name == "LogSoftmax") {}
  void Compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    auto type = GpuTypeFor(ctx, x, kGpuFloats);
    TFD_OP_REQUIRES_OK(ctx, type.status());
    TFD_OP_REQUIRES(ctx, x.rank() >= 1,
                    errors::InvalidArgument("logits must have rank >= 1 but has shape ",
                                            x.shape().ToString()));
    Tensor* y = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, x.shape(), &y));
    GpuDevice& dev = GpuDeviceOf(ctx);
    TFD_GPU_LAUNCH(ctx, dev, tfd_gpu_softmax(*type, log_, x.raw_data(), y->raw_data(),
                                             Rows(x.shape()), x.dim(x.rank() - 1),
                                             dev.stream()));
  }

 private:
  const bool log_;
};

// Outputs loss [batch] and backprop [batch, classes] of features
// [batch, classes]; OK when the launch may go ahead.
Status XentOutputs(OpKernelContext& ctx, const Tensor& features, Tensor** loss, Tensor** backprop) {
  if (features.rank() != 2) {
    return errors::InvalidArgument("features must be a matrix [batch, classes] but has shape ",
                                   features.shape().ToString());
  }
  TFD_RETURN_IF_ERROR(ctx.allocate_output(0, TensorShape({features.dim(0)}), loss));
  return ctx.allocate_output(1, features.shape(), backprop);
}

class XentGpuOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    const Tensor& features = ctx.input(0);
    const Tensor& labels = ctx.input(1);
    auto type = GpuTypeFor(ctx, features, kGpuFloats);
    TFD_OP_REQUIRES_OK(ctx, type.status());
    TFD_OP_REQUIRES(ctx, labels.shape() == features.shape(),
                    errors::InvalidArgument("labels ", labels.shape().ToString(),
                                            " must have the shape of features ",
                                            features.shape().ToString()));
    Tensor *loss = nullptr, *backprop = nullptr;
    TFD_OP_REQUIRES_OK(ctx, XentOutputs(ctx, features, &loss, &backprop));
    GpuDevice& dev = GpuDeviceOf(ctx);
    TFD_GPU_LAUNCH(ctx, dev, tfd_gpu_xent(*type, features.raw_data(), labels.raw_data(),
                                          loss->raw_data(), backprop->raw_data(), features.dim(0),
                                          features.dim(1), dev.stream()));
  }
};

// Labels stay in host memory (they are checked there, as on the CPU) and
// travel to the device with the launch.
class SparseXentGpuOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    const Tensor& features = ctx.input(0);
    const Tensor& labels = ctx.input(1);
    auto type = GpuTypeFor(ctx, features, kGpuFloats);
    TFD_OP_REQUIRES_OK(ctx, type.status());
    Tensor *loss = nullptr, *backprop = nullptr;
    TFD_OP_REQUIRES_OK(ctx, XentOutputs(ctx, features, &loss, &backprop));
    TFD_OP_REQUIRES(ctx, labels.rank() == 1 && labels.dim(0) == features.dim(0),
                    errors::InvalidArgument("labels must be a vector of ", features.dim(0),
                                            " class indices (one per row of features ",
                                            features.shape().ToString(), ") but has shape ",
                                            labels.shape().ToString()));
    const int64_t classes = features.dim(1);
    for (int64_t i = 0; i < labels.num_elements(); ++i) {
      const int64_t l = labels.dtype() == DType::kInt32 ? labels.data<int32_t>()[i]
                                                        : labels.data<int64_t>()[i];
      TFD_OP_REQUIRES(ctx, l >= 0 && l < classes,
                      errors::InvalidArgument("labels[", i, "] = ", l,
                                              " is not a valid class index: there are ", classes,
                                              " classes, so it must be in [0, ", classes, ")"));
    }
    if (features.num_elements() == 0) return;
    GpuDevice& dev = GpuDeviceOf(ctx);
    auto on_device = Tensor::AllocateOn(&dev, labels.dtype(), labels.shape());
    TFD_OP_REQUIRES_OK(ctx, on_device.status());
    TFD_OP_REQUIRES_OK(ctx, dev.CopyFromHost(on_device->raw_data(), labels));
    TFD_GPU_LAUNCH(ctx, dev, tfd_gpu_sparse_xent(*type, GpuType(labels.dtype()),
                                                 features.raw_data(), on_device->raw_data(),
                                                 loss->raw_data(), backprop->raw_data(),
                                                 features.dim(0), classes, dev.stream()));
  }
};

}  // namespace

Status RegisterNnGpuKernels(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(AddGpuKernel<ActivationGpuOp<TFD_GPU_SIGMOID>>(r, "Sigmoid", kFloatT));
  TFD_RETURN_IF_ERROR(AddGpuKernel<ActivationGpuOp<TFD_GPU_TANH>>(r, "Tanh", kFloatT));
  TFD_RETURN_IF_ERROR(AddGpuKernel<ActivationGpuOp<TFD_GPU_RELU>>(r, "Relu", kFloatT));
  TFD_RETURN_IF_ERROR(AddGpuKernel<ActivationGradGpuOp<TFD_GPU_SIGMOID_GRAD>>(r, "SigmoidGrad", kFloatT));
  TFD_RETURN_IF_ERROR(AddGpuKernel<ActivationGradGpuOp<TFD_GPU_TANH_GRAD>>(r, "TanhGrad", kFloatT));
  TFD_RETURN_IF_ERROR(AddGpuKernel<ActivationGradGpuOp<TFD_GPU_RELU_GRAD>>(r, "ReluGrad", kFloatT));
  TFD_RETURN_IF_ERROR(AddGpuKernel<BiasAddGpuOp>(r, "BiasAdd", kFloatT));
  TFD_RETURN_IF_ERROR(AddGpuKernel<BiasAddGradGpuOp>(r, "BiasAddGrad", kFloatT));
  TFD_RETURN_IF_ERROR(AddGpuKernel<SoftmaxGpuOp>(r, "Softmax", kFloatT));
  TFD_RETURN_IF_ERROR(AddGpuKernel<SoftmaxGpuOp>(r, "LogSoftmax", kFloatT));
  TFD_RETURN_IF_ERROR(AddGpuKernel<XentGpuOp>(r, "SoftmaxCrossEntropyWithLogits", kFloatT));
  TFD_RETURN_IF_ERROR(AddGpuKernel<SparseXentGpuOp>(r, "SparseSoftmaxCrossEntropyWithLogits",
                                                    kFloatT, {.inputs = 1u << 1}));
  return OkStatus();
}

}  // namespace tfd::gpu
