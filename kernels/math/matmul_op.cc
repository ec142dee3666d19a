// MatMul: the matrix product of two rank-2 tensors, either side optionally
// transposed. Floats go through Gemm (gemm.h: OpenBLAS or Eigen, products
// large enough to gain from it split over the task's intra-op threads);
// integers through Eigen's GEMM on the calling thread.
#include <mutex>

#include "common/op_kernel.h"
#include "common/tensor_eigen.h"
#include "kernels/framework/intra_op_pool.h"
#include "kernels/math/math_ops_internal.h"
#include "kernels/math/gemm.h"

namespace tfd::kernels {
namespace {

std::string Describe(const char* name, int64_t rows, int64_t cols, bool transposed) {
  return errors::StrCat(name, " [", rows, ", ", cols, "]", transposed ? " (transposed)" : "");
}

class MatMulOp : public OpKernel {
 public:
  explicit MatMulOp(OpKernelConstruction& c) : OpKernel(c) {
    c.SetStatus(c.GetAttr("transpose_a", &transpose_a_));
    c.SetStatus(c.GetAttr("transpose_b", &transpose_b_));
  }

  void Compute(OpKernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    TFD_OP_REQUIRES(ctx, a.rank() == 2 && b.rank() == 2,
                    errors::InvalidArgument("MatMul needs two matrices (rank 2), got a of shape ",
                                            a.shape().ToString(), " and b of shape ",
                                            b.shape().ToString()));
    const int64_t m = transpose_a_ ? a.dim(1) : a.dim(0);
    const int64_t ka = transpose_a_ ? a.dim(0) : a.dim(1);
    const int64_t kb = transpose_b_ ? b.dim(1) : b.dim(0);
    const int64_t n = transpose_b_ ? b.dim(0) : b.dim(1);
    TFD_OP_REQUIRES(ctx, ka == kb,
                    errors::InvalidArgument(
                        "Matrix size-incompatible: In[0]: ", a.shape().ToString(),
                        ", In[1]: ", b.shape().ToString(), " (inner dimensions ", ka, " of ",
                        Describe("a", a.dim(0), a.dim(1), transpose_a_), " and ", kb, " of ",
                        Describe("b", b.dim(0), b.dim(1), transpose_b_), " differ)"));
    Tensor* out = nullptr;
    if (ka == 0) {
      // The product of empty factors is all zeros: what allocate_output gives.
      TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, TensorShape({m, n}), &out));
      return;
    }
    // Both products below assign every element, so the output is not zeroed
    // first (for the w1 gradient of the classic model, 314 KB per step).
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output_for_overwrite(0, TensorShape({m, n}), &out));
    if (m == 0 || n == 0) return;
    switch (a.dtype()) {
      case DType::kFloat32: return Gemm(SplitPool(ctx, m, n, ka), Args<float>(a, b, m, n, ka, *out));
      case DType::kFloat64:
        return Gemm(SplitPool(ctx, m, n, ka), Args<double>(a, b, m, n, ka, *out));
      case DType::kInt32: return Multiply<int32_t>(a, b, *out);
      case DType::kInt64: return Multiply<int64_t>(a, b, *out);
      default:
        ctx.SetStatus(errors::InvalidArgument("MatMul does not support dtype ",
                                              DTypeName(a.dtype())));
    }
  }

 private:
  // The task's intra-op threads, looked up once per kernel; null when the
  // task has one compute thread or no ResourceMgr (then the product stays on
  // this thread).
  const IntraOpPool* Pool(const OpKernelContext& ctx) {
    std::call_once(pool_once_, [&] {
      auto pool = IntraOpPool::ForTask(ctx.env());
      if (pool.ok()) pool_ = *std::move(pool);
    });
    return pool_.get();
  }

  // The pool for a product that splits, else null: a task whose products
  // are all small never starts its threads.
  const IntraOpPool* SplitPool(const OpKernelContext& ctx, int64_t m, int64_t n, int64_t k) {
    return GemmSplitPays(m, n, k) ? Pool(ctx) : nullptr;
  }

  template <typename T>
  GemmArgs<T> Args(const Tensor& a, const Tensor& b, int64_t m, int64_t n, int64_t k,
                   Tensor& out) const {
    return GemmArgs<T>{.m = m, .n = n, .k = k, .ta = transpose_a_, .tb = transpose_b_,
                       .a = a.data<T>(), .lda = a.dim(1), .b = b.data<T>(), .ldb = b.dim(1),
                       .c = out.data<T>(), .ldc = n};
  }

  template <typename T>
  void Multiply(const Tensor& a, const Tensor& b, Tensor& out) const {
    auto A = EigenMatrix<T>(a);
    auto B = EigenMatrix<T>(b);
    auto C = EigenMatrix<T>(out);
    if (!transpose_a_ && !transpose_b_) {
      C.noalias() = A * B;
    } else if (transpose_a_ && !transpose_b_) {
      C.noalias() = A.transpose() * B;
    } else if (!transpose_a_ && transpose_b_) {
      C.noalias() = A * B.transpose();
    } else {
      C.noalias() = A.transpose() * B.transpose();
    }
  }

  bool transpose_a_ = false;
  bool transpose_b_ = false;
  std::once_flag pool_once_;
  std::shared_ptr<IntraOpPool> pool_;  // written once, under pool_once_
};

Status MatMulShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(c.WithRank(0, 2));
  TFD_RETURN_IF_ERROR(c.WithRank(1, 2));
  TFD_ASSIGN_OR_RETURN(bool ta, c.GetAttr<bool>("transpose_a"));
  TFD_ASSIGN_OR_RETURN(bool tb, c.GetAttr<bool>("transpose_b"));
  const PartialShape& a = c.input(0);
  const PartialShape& b = c.input(1);
  // -1 stands for whatever is unknown, including a whole unknown-rank input.
  const int64_t m = a.rank_known() ? a.dim(ta ? 1 : 0) : -1;
  const int64_t ka = a.rank_known() ? a.dim(ta ? 0 : 1) : -1;
  const int64_t kb = b.rank_known() ? b.dim(tb ? 1 : 0) : -1;
  const int64_t n = b.rank_known() ? b.dim(tb ? 0 : 1) : -1;
  if (ka >= 0 && kb >= 0 && ka != kb) {
    return errors::InvalidArgument("Matrix size-incompatible: In[0]: ", a.ToString(),
                                   ", In[1]: ", b.ToString(), " (inner dimensions ", ka, " vs ",
                                   kb, " with transpose_a=", ta ? "true" : "false",
                                   ", transpose_b=", tb ? "true" : "false", ")");
  }
  c.set_output(0, PartialShape({m, n}));
  return OkStatus();
}

}  // namespace

Status RegisterMatMulOp(OpRegistry& r) {
  return r.Add<MatMulOp>(
      OpDefBuilder("MatMul")
          .Input("a: T")
          .Input("b: T")
          .Output("product: T")
          .Attr("transpose_a: bool = false")
          .Attr("transpose_b: bool = false")
          .Attr("T: {float32, float64, int32, int64}")
          .Doc("The matrix product op(a) * op(b), where op transposes when transpose_a / "
               "transpose_b is set. Shape: a [m, k] and b [k, n] (after the transposes) give "
               "[m, n]; the inner dimensions must match."),
      MatMulShape);
}

}  // namespace tfd::kernels
