// BatchMatMul and BatchMatMulV2: matrix products over the last two
// dimensions of x and y, optionally adjoint (transposed: tfd has no complex
// dtypes), one product per batch index. BatchMatMul (TF1) takes equal batch
// dimensions; BatchMatMulV2 broadcasts them as numpy's matmul does. Each
// product is Eigen's GEMM on the calling thread. Gradients as TensorFlow's
// math_grad.py, with V2's summed over the broadcast batch dimensions.
#include <algorithm>
#include <vector>

#include <Eigen/Core>

#include "common/op_kernel.h"
#include "kernels/math/grad_util.h"
#include "kernels/math/math_ops_internal.h"

namespace tfd::kernels {
namespace {

template <typename T>
using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using ConstMatrixMap = Eigen::Map<const RowMatrix<T>>;

// The batch dimensions of x and y matched up: for each output batch index,
// which batch of x and of y it multiplies.
struct BatchPlan {
  std::vector<int64_t> out_batch;   // the output's batch dimensions
  std::vector<int64_t> x_of, y_of;  // per output batch: x's and y's batch
};

StatusOr<BatchPlan> PlanBatches(const std::vector<int64_t>& xb, const std::vector<int64_t>& yb,
                                bool broadcast) {
  if (!broadcast && xb != yb) {
    return errors::InvalidArgument("BatchMatMul needs equal batch dimensions, got ",
                                   PartialShape(xb).ToString(), " and ",
                                   PartialShape(yb).ToString(), " (BatchMatMulV2 broadcasts)");
  }
  const size_t rank = std::max(xb.size(), yb.size());
  std::vector<int64_t> xp(rank, 1), yp(rank, 1);
  std::copy(xb.begin(), xb.end(), xp.begin() + (rank - xb.size()));
  std::copy(yb.begin(), yb.end(), yp.begin() + (rank - yb.size()));
  BatchPlan p;
  for (size_t d = 0; d < rank; ++d) {
    if (xp[d] != yp[d] && xp[d] != 1 && yp[d] != 1) {
      return errors::InvalidArgument("batch dimensions ", PartialShape(xb).ToString(), " and ",
                                     PartialShape(yb).ToString(), " do not broadcast");
    }
    p.out_batch.push_back(xp[d] == 1 ? yp[d] : xp[d]);
  }
  int64_t total = 1;
  for (int64_t d : p.out_batch) total *= d;
  for (int64_t i = 0; i < total; ++i) {
    int64_t rest = i, xi = 0, yi = 0, xs = 1, ys = 1;
    for (size_t d = rank; d-- > 0;) {
      const int64_t k = rest % p.out_batch[d];
      rest /= p.out_batch[d];
      xi += (xp[d] == 1 ? 0 : k) * xs;
      yi += (yp[d] == 1 ? 0 : k) * ys;
      xs *= xp[d];
      ys *= yp[d];
    }
    p.x_of.push_back(xi);
    p.y_of.push_back(yi);
  }
  return p;
}

template <typename T>
void MultiplyBatches(const Tensor& x, const Tensor& y, bool adj_x, bool adj_y,
                     const BatchPlan& plan, Tensor& out) {
  const int64_t xr = x.dim(x.rank() - 2), xc = x.dim(x.rank() - 1);
  const int64_t yr = y.dim(y.rank() - 2), yc = y.dim(y.rank() - 1);
  const int64_t m = adj_x ? xc : xr, n = adj_y ? yr : yc;
  for (size_t b = 0; b < plan.x_of.size(); ++b) {
    ConstMatrixMap<T> xm(x.data<T>() + plan.x_of[b] * xr * xc, xr, xc);
    ConstMatrixMap<T> ym(y.data<T>() + plan.y_of[b] * yr * yc, yr, yc);
    Eigen::Map<RowMatrix<T>> z(out.data<T>() + static_cast<int64_t>(b) * m * n, m, n);
    if (!adj_x && !adj_y) z.noalias() = xm * ym;
    if (!adj_x && adj_y) z.noalias() = xm * ym.transpose();
    if (adj_x && !adj_y) z.noalias() = xm.transpose() * ym;
    if (adj_x && adj_y) z.noalias() = xm.transpose() * ym.transpose();
  }
}

template <bool kBroadcast>
class BatchMatMulOp : public OpKernel {
 public:
  explicit BatchMatMulOp(OpKernelConstruction& c) : OpKernel(c) {
    c.SetStatus(c.GetAttr("adj_x", &adj_x_));
    c.SetStatus(c.GetAttr("adj_y", &adj_y_));
  }

  void Compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& y = ctx.input(1);
    TFD_OP_REQUIRES(ctx, x.rank() >= 2 && y.rank() >= 2,
                    errors::InvalidArgument(node().op, " '", name(), "' needs x and y of rank >= "
                                            "2, got ", x.shape().ToString(), " and ",
                                            y.shape().ToString()));
    const std::vector<int64_t>& xd = x.shape().dims();
    const std::vector<int64_t>& yd = y.shape().dims();
    const int64_t k_x = adj_x_ ? xd[xd.size() - 2] : xd.back();
    const int64_t k_y = adj_y_ ? yd.back() : yd[yd.size() - 2];
    TFD_OP_REQUIRES(ctx, k_x == k_y,
                    errors::InvalidArgument(node().op, " '", name(), "': inner dimensions differ: ",
                                            k_x, " of x ", x.shape().ToString(), " and ", k_y,
                                            " of y ", y.shape().ToString(), " (adj_x ", adj_x_,
                                            ", adj_y ", adj_y_, ")"));
    auto plan = PlanBatches({xd.begin(), xd.end() - 2}, {yd.begin(), yd.end() - 2}, kBroadcast);
    TFD_OP_REQUIRES_OK(ctx, plan.status().WithContext(node().op + " '" + name() + "': "));
    std::vector<int64_t> out_dims = plan->out_batch;
    out_dims.push_back(adj_x_ ? xd.back() : xd[xd.size() - 2]);
    out_dims.push_back(adj_y_ ? yd[yd.size() - 2] : yd.back());
    Tensor* out = nullptr;  // zeros: the right product when k is 0
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, TensorShape(out_dims), &out));
    if (out->num_elements() == 0 || k_x == 0) return;
    TFD_SWITCH_NUMERIC(x.dtype(), T, (MultiplyBatches<T>(x, y, adj_x_, adj_y_, *plan, *out)),
                       { ctx.SetStatus(errors::InvalidArgument(node().op, " does not support ",
                                                               DTypeName(x.dtype()))); });
  }

 private:
  bool adj_x_ = false, adj_y_ = false;
};

template <bool kBroadcast>
Status BatchMatMulShape(InferenceContext& c) {
  const PartialShape &x = c.input(0), &y = c.input(1);
  if (!x.rank_known() || !y.rank_known()) {
    c.set_output(0, PartialShape::Unknown());
    return OkStatus();
  }
  if (x.rank() < 2 || y.rank() < 2) {
    return errors::InvalidArgument("BatchMatMul needs x and y of rank >= 2, got ", x.ToString(),
                                   " and ", y.ToString());
  }
  TFD_ASSIGN_OR_RETURN(bool adj_x, c.GetAttr<bool>("adj_x"));
  TFD_ASSIGN_OR_RETURN(bool adj_y, c.GetAttr<bool>("adj_y"));
  const std::vector<int64_t>& xd = x.dims();
  const std::vector<int64_t>& yd = y.dims();
  const int64_t k_x = adj_x ? xd[xd.size() - 2] : xd.back();
  const int64_t k_y = adj_y ? yd.back() : yd[yd.size() - 2];
  if (k_x >= 0 && k_y >= 0 && k_x != k_y) {
    return errors::InvalidArgument("BatchMatMul: inner dimensions differ: ", k_x, " of x ",
                                   x.ToString(), " and ", k_y, " of y ", y.ToString());
  }
  const PartialShape xb(std::vector<int64_t>(xd.begin(), xd.end() - 2));
  const PartialShape yb(std::vector<int64_t>(yd.begin(), yd.end() - 2));
  PartialShape batch = xb;
  if (kBroadcast) {
    TFD_ASSIGN_OR_RETURN(batch, InferenceContext::Broadcast(xb, yb));
  } else {
    auto merged = xb.Merge(yb);
    if (!merged.ok()) {
      return errors::InvalidArgument("BatchMatMul needs equal batch dimensions, got ",
                                     xb.ToString(), " and ", yb.ToString());
    }
    batch = *merged;
  }
  std::vector<int64_t> dims = batch.dims();
  dims.push_back(adj_x ? xd.back() : xd[xd.size() - 2]);
  dims.push_back(adj_y ? yd[yd.size() - 2] : yd.back());
  c.set_output(0, PartialShape(dims));
  return OkStatus();
}

// The batch dimensions of x's shape: all but the last two.
Output BatchShape(const Scope& s, const Output& x) {
  return grad::Op(s, "StridedSlice",
                  {grad::ShapeOf(s, x), grad::IntVector(s, {0}), grad::IntVector(s, {-2}),
                   grad::IntVector(s, {1})},
                  {{"Index", DType::kInt32}});
}

template <bool kBroadcast>
Status BatchMatMulGrad(Scope& s, const GradInputs& in, std::vector<Output>* dx) {
  TFD_ASSIGN_OR_RETURN(bool adj_x, in.GetAttr<bool>("adj_x"));
  TFD_ASSIGN_OR_RETURN(bool adj_y, in.GetAttr<bool>("adj_y"));
  const Output &x = in.inputs[0], &y = in.inputs[1], &g = in.dy[0];
  auto bmm = [&](const Output& a, const Output& b, bool aa, bool ab) {
    return grad::Op(s, in.node.op, {a, b}, {{"adj_x", aa}, {"adj_y", ab}});
  };
  Output gx, gy;
  if (!adj_x && !adj_y) {
    gx = bmm(g, y, false, true), gy = bmm(x, g, true, false);
  } else if (!adj_x) {
    gx = bmm(g, y, false, false), gy = bmm(g, x, true, false);
  } else if (!adj_y) {
    gx = bmm(y, g, false, true), gy = bmm(x, g, false, false);
  } else {
    gx = bmm(y, g, true, true), gy = bmm(g, x, true, true);
  }
  if (kBroadcast) {  // sum over the batch dimensions each side was broadcast along
    const Operation args =
        s.AddOperation("BroadcastGradientArgs", {BatchShape(s, x), BatchShape(s, y)});
    gx = grad::Reshape(s, grad::Sum(s, gx, args.output(0)), grad::ShapeOf(s, x));
    gy = grad::Reshape(s, grad::Sum(s, gy, args.output(1)), grad::ShapeOf(s, y));
  }
  (*dx)[0] = gx;
  (*dx)[1] = gy;
  return OkStatus();
}

template <bool kBroadcast>
Status AddBatchMatMul(OpRegistry& r, const char* name, const char* doc) {
  TFD_RETURN_IF_ERROR(r.Add<BatchMatMulOp<kBroadcast>>(
      OpDefBuilder(name)
          .Input("x: T")
          .Input("y: T")
          .Output("output: T")
          .Attr("T: {float32, float64, int32, int64}")
          .Attr("adj_x: bool = false")
          .Attr("adj_y: bool = false")
          .Doc(std::string(doc) +
               " Per batch index, output = op(x) op(y) with op the transpose where adj_x / "
               "adj_y is set; x and y have rank >= 2 and matching inner dimensions. Shape: "
               "the batch dimensions, then [rows of op(x), columns of op(y)]."),
      BatchMatMulShape<kBroadcast>));
  return grad::Register(r, name, BatchMatMulGrad<kBroadcast>);
}

}  // namespace

Status RegisterBatchMatMulOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(AddBatchMatMul<false>(
      r, "BatchMatMul", "Batched matrix products; x and y have equal batch dimensions."));
  return AddBatchMatMul<true>(
      r, "BatchMatMulV2",
      "Batched matrix products; the batch dimensions broadcast as numpy.matmul's.");
}

}  // namespace tfd::kernels
