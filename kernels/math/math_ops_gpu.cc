// The math family's GPU kernels: element-wise unary and broadcasting binary
// arithmetic, MatMul, Sum and Mean, ArgMax. Checks and output shapes are
// the CPU kernels' (BroadcastPlan, ReductionPlan); the arithmetic runs in
// cwise_ops_gpu.cu, matmul_op_gpu.cu (or cuBLAS) and reduction_ops_gpu.cu.
#include "kernels/gpu/gpu_kernel.h"
#include "kernels/gpu/register_gpu.h"
#include "kernels/math/broadcast.h"
#include "kernels/math/cwise_ops_gpu.h"
#include "kernels/math/reduction_ops_gpu.h"
#include "kernels/math/reduction_util.h"

namespace tfd::gpu {
namespace {

template <int kOp>
class UnaryGpuOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    auto type = GpuTypeFor(ctx, x, kGpuFloats);
    TFD_OP_REQUIRES_OK(ctx, type.status());
    Tensor* y = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, x.shape(), &y));
    GpuDevice& dev = GpuDeviceOf(ctx);
    TFD_GPU_LAUNCH(ctx, dev, tfd_gpu_unary(kOp, *type, x.raw_data(), y->raw_data(),
                                           x.num_elements(), dev.stream()));
  }
};

// The plan's walk in the launchers' terms: the shortcuts as strided walks of
// one dimension (stride 0 repeats the scalar).
StatusOr<TfdGpuStrides> Strides(const kernels::BroadcastPlan& plan) {
  TfdGpuStrides s{};
  const int64_t n = plan.output_shape().num_elements();
  using Kind = kernels::BroadcastPlan::Kind;
  if (plan.kind() != Kind::kGeneral) {
    s.rank = 1;
    s.dims[0] = n;
    s.a[0] = plan.kind() == Kind::kScalarX ? 0 : 1;
    s.b[0] = plan.kind() == Kind::kScalarY ? 0 : 1;
    return s;
  }
  const auto& dims = plan.dims();
  if (dims.size() > TFD_GPU_MAX_DIMS) {
    return errors::InvalidArgument("broadcasting over ", dims.size(),
                                   " dimensions (after merging) exceeds the GPU kernels' ",
                                   TFD_GPU_MAX_DIMS);
  }
  s.rank = static_cast<int>(dims.size());
  for (int d = 0; d < s.rank; ++d) {
    s.dims[d] = dims[d];
    s.a[d] = plan.x_strides()[d];
    s.b[d] = plan.y_strides()[d];
  }
  return s;
}

template <int kOp>
class BinaryGpuOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& y = ctx.input(1);
    auto type = GpuTypeFor(ctx, x, kOp == TFD_GPU_DIV ? kGpuFloats : kGpuNumbers);
    TFD_OP_REQUIRES_OK(ctx, type.status());
    auto plan = kernels::BroadcastPlan::Make(x.shape(), y.shape());
    TFD_OP_REQUIRES_OK(ctx, plan.status());
    auto strides = Strides(*plan);
    TFD_OP_REQUIRES_OK(ctx, strides.status());
    Tensor* z = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, plan->output_shape(), &z));
    GpuDevice& dev = GpuDeviceOf(ctx);
    TFD_GPU_LAUNCH(ctx, dev, tfd_gpu_binary(kOp, *type, x.raw_data(), y.raw_data(), z->raw_data(),
                                            z->num_elements(), &*strides, dev.stream()));
  }
};

class MatMulGpuOp : public OpKernel {
 public:
  explicit MatMulGpuOp(OpKernelConstruction& c) : OpKernel(c) {
    c.SetStatus(c.GetAttr("transpose_a", &transpose_a_));
    c.SetStatus(c.GetAttr("transpose_b", &transpose_b_));
  }
  void Compute(OpKernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    TFD_OP_REQUIRES_OK(ctx, GpuTypeFor(ctx, a, kGpuFloats).status());
    TFD_OP_REQUIRES(ctx, a.rank() == 2 && b.rank() == 2,
                    errors::InvalidArgument("MatMul needs two matrices (rank 2), got a of shape ",
                                            a.shape().ToString(), " and b of shape ",
                                            b.shape().ToString()));
    const int64_t m = transpose_a_ ? a.dim(1) : a.dim(0);
    const int64_t ka = transpose_a_ ? a.dim(0) : a.dim(1);
    const int64_t kb = transpose_b_ ? b.dim(1) : b.dim(0);
    const int64_t n = transpose_b_ ? b.dim(0) : b.dim(1);
    TFD_OP_REQUIRES(ctx, ka == kb,
                    errors::InvalidArgument("Matrix size-incompatible: In[0]: ",
                                            a.shape().ToString(), ", In[1]: ",
                                            b.shape().ToString(), " (inner dimensions ", ka,
                                            " and ", kb, " differ)"));
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, TensorShape({m, n}), &out));
    TFD_OP_REQUIRES_OK(ctx, GpuDeviceOf(ctx).MatMul(a.dtype(), transpose_a_, transpose_b_, m, n,
                                                    ka, a.raw_data(), b.raw_data(),
                                                    out->raw_data()));
  }

 private:
  bool transpose_a_ = false, transpose_b_ = false;
};

template <int kOp>
class ReductionGpuOp : public OpKernel {
 public:
  explicit ReductionGpuOp(OpKernelConstruction& c) : OpKernel(c) {
    c.SetStatus(c.GetAttr("keep_dims", &keep_dims_));
  }
  void Compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    auto type = GpuTypeFor(ctx, x, kOp == TFD_GPU_MEAN ? kGpuFloats : kGpuNumbers);
    TFD_OP_REQUIRES_OK(ctx, type.status());
    auto axes = kernels::AxesFromTensor(ctx.input(1), "reduction_indices");
    TFD_OP_REQUIRES_OK(ctx, axes.status());
    auto plan = kernels::MakeReductionPlan(x.shape(), *axes, keep_dims_);
    TFD_OP_REQUIRES_OK(ctx, plan.status());
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, plan->output_shape, &out));
    if (plan->out_count == 0) return;
    const int rank = static_cast<int>(plan->dims.size());
    TFD_OP_REQUIRES(ctx, rank <= TFD_GPU_MAX_DIMS,
                    errors::InvalidArgument("a reduction over ", rank,
                                            " alternating dimensions exceeds the GPU kernels' ",
                                            TFD_GPU_MAX_DIMS));
    int reduced[TFD_GPU_MAX_DIMS] = {};
    for (int d = 0; d < rank; ++d) reduced[d] = plan->reduced[d] ? 1 : 0;
    GpuDevice& dev = GpuDeviceOf(ctx);
    TFD_GPU_LAUNCH(ctx, dev, tfd_gpu_reduce(kOp, *type, x.raw_data(), out->raw_data(), rank,
                                            plan->dims.data(), reduced, plan->out_count,
                                            plan->reduce_count, dev.stream()));
  }

 private:
  bool keep_dims_ = false;
};

class ArgMaxGpuOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void Compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    auto type = GpuTypeFor(ctx, x, kGpuFloats);
    TFD_OP_REQUIRES_OK(ctx, type.status());
    auto plan = kernels::MakeArgReductionPlan(x, ctx.input(1));
    TFD_OP_REQUIRES_OK(ctx, plan.status());
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, plan->output_shape, &out));
    GpuDevice& dev = GpuDeviceOf(ctx);
    TFD_GPU_LAUNCH(ctx, dev, tfd_gpu_argmax(*type, GpuType(ctx.output_type(0)), x.raw_data(),
                                            out->raw_data(), plan->outer, plan->n, plan->inner,
                                            dev.stream()));
  }
};

constexpr HostMemory kSecondInputOnHost{.inputs = 1u << 1};

}  // namespace

Status RegisterMathGpuKernels(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(AddGpuKernel<UnaryGpuOp<TFD_GPU_NEG>>(r, "Neg", kFloatT));
  TFD_RETURN_IF_ERROR(AddGpuKernel<UnaryGpuOp<TFD_GPU_SQUARE>>(r, "Square", kFloatT));
  TFD_RETURN_IF_ERROR(AddGpuKernel<UnaryGpuOp<TFD_GPU_SQRT>>(r, "Sqrt", kFloatT));
  TFD_RETURN_IF_ERROR(AddGpuKernel<UnaryGpuOp<TFD_GPU_RSQRT>>(r, "Rsqrt", kFloatT));
  TFD_RETURN_IF_ERROR(AddGpuKernel<UnaryGpuOp<TFD_GPU_EXP>>(r, "Exp", kFloatT));
  TFD_RETURN_IF_ERROR(AddGpuKernel<UnaryGpuOp<TFD_GPU_LOG>>(r, "Log", kFloatT));
  TFD_RETURN_IF_ERROR(AddGpuKernel<UnaryGpuOp<TFD_GPU_ABS>>(r, "Abs", kFloatT));
  TFD_RETURN_IF_ERROR(AddGpuKernel<UnaryGpuOp<TFD_GPU_RECIPROCAL>>(r, "Reciprocal", kFloatT));
  TFD_RETURN_IF_ERROR(AddGpuKernel<BinaryGpuOp<TFD_GPU_ADD>>(r, "Add", kNumberT));
  TFD_RETURN_IF_ERROR(AddGpuKernel<BinaryGpuOp<TFD_GPU_SUB>>(r, "Sub", kNumberT));
  TFD_RETURN_IF_ERROR(AddGpuKernel<BinaryGpuOp<TFD_GPU_MUL>>(r, "Mul", kNumberT));
  TFD_RETURN_IF_ERROR(AddGpuKernel<BinaryGpuOp<TFD_GPU_DIV>>(r, "Div", kFloatT));
  TFD_RETURN_IF_ERROR(AddGpuKernel<BinaryGpuOp<TFD_GPU_MAXIMUM>>(r, "Maximum", kNumberT));
  TFD_RETURN_IF_ERROR(AddGpuKernel<BinaryGpuOp<TFD_GPU_MINIMUM>>(r, "Minimum", kNumberT));
  TFD_RETURN_IF_ERROR(
      AddGpuKernel<BinaryGpuOp<TFD_GPU_SQUARED_DIFFERENCE>>(r, "SquaredDifference", kNumberT));
  TFD_RETURN_IF_ERROR(AddGpuKernel<MatMulGpuOp>(r, "MatMul", kFloatT));
  TFD_RETURN_IF_ERROR(AddGpuKernel<ReductionGpuOp<TFD_GPU_SUM>>(r, "Sum", kNumberT, kSecondInputOnHost));
  TFD_RETURN_IF_ERROR(AddGpuKernel<ReductionGpuOp<TFD_GPU_MEAN>>(r, "Mean", kFloatT, kSecondInputOnHost));
  TFD_RETURN_IF_ERROR(AddGpuKernel<ArgMaxGpuOp>(r, "ArgMax", kFloatT, kSecondInputOnHost));
  return OkStatus();
}

}  // namespace tfd::gpu
