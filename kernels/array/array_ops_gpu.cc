// The array family's GPU kernels: Const (uploaded once), Fill, ZerosLike,
// OnesLike, Cast, and the ops that only look at a tensor's shape (Identity,
// Reshape, ExpandDims, Squeeze; Shape, Size, Rank answering on the host),
// whose CPU kernels serve the GPU unchanged: they never touch the elements,
// and a view of device memory stays on the device. NoOp and
// BroadcastGradientArgs (shapes in, axes out, all on the host) likewise.
#include "kernels/array/array_ops_gpu.h"
#include "kernels/gpu/gpu_kernel.h"
#include "kernels/gpu/register_gpu.h"

namespace tfd::gpu {
namespace {

class ConstGpuOp : public OpKernel {
 public:
  explicit ConstGpuOp(OpKernelConstruction& c) : OpKernel(c) {
    Tensor host;
    c.SetStatus(c.GetAttr("value", &host));
    if (!c.status().ok()) return;
    auto* dev = static_cast<GpuDevice*>(c.node().memory);
    auto t = Tensor::AllocateOn(dev, host.dtype(), host.shape());
    if (t.ok() && host.total_bytes() > 0) {
      c.SetStatus(dev->CopyFromHost(t->raw_data(), host));
    }
    if (!t.ok()) c.SetStatus(t.status());
    value_ = t.ok() ? *t : Tensor();
  }
  void Compute(OpKernelContext& ctx) override { ctx.set_output(0, value_); }
  bool is_cheap() const override { return true; }

 private:
  Tensor value_;  // on the device, shared by every step
};

class FillGpuOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    const Tensor& dims = ctx.input(0);
    const Tensor& value = ctx.input(1);
    auto type = GpuTypeFor(ctx, value, kGpuNumbers);
    TFD_OP_REQUIRES_OK(ctx, type.status());
    TFD_OP_REQUIRES(ctx, dims.rank() == 1 && value.rank() == 0,
                    errors::InvalidArgument("dims must be a vector and value a scalar, got ",
                                            dims.shape().ToString(), " and ",
                                            value.shape().ToString()));
    std::vector<int64_t> shape;
    for (int64_t i = 0; i < dims.num_elements(); ++i) {
      shape.push_back(dims.dtype() == DType::kInt32 ? dims.data<int32_t>()[i]
                                                    : dims.data<int64_t>()[i]);
    }
    auto s = TensorShape::Make(shape);
    TFD_OP_REQUIRES_OK(ctx, s.status());
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, *s, &out));
    GpuDevice& dev = GpuDeviceOf(ctx);
    TFD_GPU_LAUNCH(ctx, dev, tfd_gpu_fill(*type, value.raw_data(), out->raw_data(),
                                          out->num_elements(), dev.stream()));
  }
};

// ZerosLike and OnesLike: the input's shape and type, filled.
template <int kValue>
class FillLikeGpuOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    auto type = GpuTypeFor(ctx, x, kGpuNumbers);
    TFD_OP_REQUIRES_OK(ctx, type.status());
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, x.shape(), &out));
    if (kValue == 0) return;  // allocate_output's zeros
    Tensor one = *Tensor::Allocate(x.dtype(), TensorShape());
    switch (x.dtype()) {
      case DType::kFloat32: one.scalar<float>() = 1; break;
      case DType::kFloat64: one.scalar<double>() = 1; break;
      case DType::kInt32: one.scalar<int32_t>() = 1; break;
      default: one.scalar<int64_t>() = 1; break;
    }
    GpuDevice& dev = GpuDeviceOf(ctx);
    TFD_GPU_LAUNCH(ctx, dev, tfd_gpu_fill(*type, one.raw_data(), out->raw_data(),
                                          out->num_elements(), dev.stream()));
  }
};

class CastGpuOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    constexpr unsigned kTypes = kGpuNumbers | 1u << TFD_GPU_BOOL;
    auto from = GpuTypeFor(ctx, x, kTypes);
    TFD_OP_REQUIRES_OK(ctx, from.status());
    const int to = GpuType(ctx.output_type(0));
    TFD_OP_REQUIRES(ctx, to >= 0 && (kTypes >> to & 1),
                    errors::InvalidArgument("Cast has no GPU kernel to ",
                                            DTypeName(ctx.output_type(0))));
    Tensor* y = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, x.shape(), &y));
    GpuDevice& dev = GpuDeviceOf(ctx);
    TFD_GPU_LAUNCH(ctx, dev, tfd_gpu_cast(*from, to, x.raw_data(), y->raw_data(),
                                          x.num_elements(), dev.stream()));
  }
};

// The source types; CastGpuOp checks the destination when it is built.
const KernelTypes kCastTypes{"SrcT", {DType::kFloat32, DType::kFloat64, DType::kInt32,
                                      DType::kInt64, DType::kBool}};

// What a device buffer can hold (not strings).
const KernelTypes kConstTypes{"dtype", kCastTypes.types};

}  // namespace

Status RegisterArrayGpuKernels(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(AddGpuKernel<ConstGpuOp>(r, "Const", kConstTypes));
  TFD_RETURN_IF_ERROR(AddGpuKernel<FillGpuOp>(r, "Fill", kNumberT, {.inputs = 0b11}));
  TFD_RETURN_IF_ERROR(AddGpuKernel<CastGpuOp>(r, "Cast", kCastTypes));
  TFD_RETURN_IF_ERROR(AddGpuKernel<FillLikeGpuOp<0>>(r, "ZerosLike", kNumberT));
  TFD_RETURN_IF_ERROR(AddGpuKernel<FillLikeGpuOp<1>>(r, "OnesLike", kNumberT));
  // What only reads a shape answers on the host, as TensorFlow's GPU
  // kernels of these do: the input stays where it is.
  for (const char* op : {"Shape", "Size", "Rank"}) {
    TFD_RETURN_IF_ERROR(ShareCpuKernel(r, op, {.outputs = 1}));
  }
  TFD_RETURN_IF_ERROR(ShareCpuKernel(r, "BroadcastGradientArgs", {.inputs = 0b11, .outputs = 0b11}));
  TFD_RETURN_IF_ERROR(ShareCpuKernel(r, "NoOp"));
  TFD_RETURN_IF_ERROR(ShareCpuKernel(r, "Identity"));
  TFD_RETURN_IF_ERROR(ShareCpuKernel(r, "Reshape", {.inputs = 1u << 1}));
  TFD_RETURN_IF_ERROR(ShareCpuKernel(r, "ExpandDims", {.inputs = 1u << 1}));
  TFD_RETURN_IF_ERROR(ShareCpuKernel(r, "Squeeze"));
  return OkStatus();
}

}  // namespace tfd::gpu
