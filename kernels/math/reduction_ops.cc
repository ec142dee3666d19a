// Reductions along axes: Sum, Mean, Max, Min, Prod (reduction_indices input,
// keep_dims attr). The input is collapsed by ReductionPlan and reduced as a
// whole, by rows or by columns with Eigen; other axis patterns are first
// reordered so the reduced axes come last. Floating-point sums (Sum, Mean)
// add pairwise (pairwise_sum.h): Eigen's running sums lose 12% of 10^8
// float32 values.
#include <algorithm>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include <Eigen/Core>

#include "common/op_kernel.h"
#include "kernels/math/ieee_functors.h"
#include "kernels/math/math_ops_internal.h"
#include "kernels/math/pairwise_sum.h"
#include "kernels/math/reduction_util.h"

namespace tfd::kernels {
namespace {

template <typename T>
using Vec = Eigen::Array<T, Eigen::Dynamic, 1>;
template <typename T>
using RowMajorArray = Eigen::Array<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// A reducer names Eigen's whole-array, per-row and accumulate forms of one
// fold, and the value of folding nothing (nullopt: an error).
struct SumReducer {
  static constexpr bool kMean = false;
  static constexpr bool kPairwise = true;  // for floating point
  template <typename T>
  static std::optional<T> Empty() { return T(0); }
  static auto All(const auto& a) { return a.sum(); }
  static auto Rows(const auto& m) { return m.rowwise().sum(); }
  static void Fold(auto& acc, const auto& row) { acc += row; }
};

// The sum divided by the count: NaN for floats when nothing is reduced.
struct MeanReducer : SumReducer {
  static constexpr bool kMean = true;
  template <typename T>
  static std::optional<T> Empty() {
    if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::quiet_NaN();
    return std::nullopt;
  }
};

struct ProdReducer {
  static constexpr bool kMean = false;
  static constexpr bool kPairwise = false;
  template <typename T>
  static std::optional<T> Empty() { return T(1); }
  static auto All(const auto& a) { return a.prod(); }
  static auto Rows(const auto& m) { return m.rowwise().prod(); }
  static void Fold(auto& acc, const auto& row) { acc *= row; }
};

// Max and Min of floats are NaN where a NaN is among the elements, as
// numpy's; Eigen's own maxCoeff() may skip it.
template <typename E>
using ScalarOf = typename std::decay_t<E>::Scalar;
template <typename T>
using MaxOf = std::conditional_t<std::is_floating_point_v<T>, ieee::MaxOp<T>,
                                 Eigen::internal::scalar_max_op<T, T>>;
template <typename T>
using MinOf = std::conditional_t<std::is_floating_point_v<T>, ieee::MinOp<T>,
                                 Eigen::internal::scalar_min_op<T, T>>;

struct MaxReducer {
  static constexpr bool kMean = false;
  static constexpr bool kPairwise = false;
  template <typename T>
  static std::optional<T> Empty() {
    if constexpr (std::is_floating_point_v<T>) return -std::numeric_limits<T>::infinity();
    return std::nullopt;
  }
  static auto All(const auto& a) { return a.redux(MaxOf<ScalarOf<decltype(a)>>()); }
  static auto Rows(const auto& m) { return m.rowwise().redux(MaxOf<ScalarOf<decltype(m)>>()); }
  static void Fold(auto& acc, const auto& row) {
    acc = acc.binaryExpr(row, MaxOf<ScalarOf<decltype(acc)>>());
  }
};

struct MinReducer {
  static constexpr bool kMean = false;
  static constexpr bool kPairwise = false;
  template <typename T>
  static std::optional<T> Empty() {
    if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::infinity();
    return std::nullopt;
  }
  static auto All(const auto& a) { return a.redux(MinOf<ScalarOf<decltype(a)>>()); }
  static auto Rows(const auto& m) { return m.rowwise().redux(MinOf<ScalarOf<decltype(m)>>()); }
  static void Fold(auto& acc, const auto& row) {
    acc = acc.binaryExpr(row, MinOf<ScalarOf<decltype(acc)>>());
  }
};

template <typename R>
class ReductionOp : public OpKernel {
 public:
  explicit ReductionOp(OpKernelConstruction& c) : OpKernel(c) {
    c.SetStatus(c.GetAttr("keep_dims", &keep_dims_));
  }

  void Compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    auto axes = AxesFromTensor(ctx.input(1), "reduction_indices");
    TFD_OP_REQUIRES_OK(ctx, axes.status());
    auto plan = MakeReductionPlan(x.shape(), *axes, keep_dims_);
    TFD_OP_REQUIRES_OK(ctx, plan.status());
    Tensor* out = nullptr;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, plan->output_shape, &out));
    if (plan->out_count == 0) return;
    Status s;
    TFD_SWITCH_NUMERIC(x.dtype(), T, { s = Run<T>(*plan, x, *out); },
                       { s = errors::InvalidArgument(node().op, " does not support dtype ",
                                                     DTypeName(x.dtype())); });
    ctx.SetStatus(s);
  }

 private:
  template <typename T>
  Status Run(const ReductionPlan& p, const Tensor& x, Tensor& out) const {
    T* o = out.data<T>();
    if (p.reduce_count == 0) {
      std::optional<T> v = R::template Empty<T>();
      if (!v) {
        return errors::InvalidArgument(node().op, " of an empty dimension is undefined for ",
                                       DTypeName(x.dtype()), ": input shape ",
                                       x.shape().ToString(), " reduces 0 elements into each of ",
                                       p.out_count, " outputs");
      }
      std::fill(o, o + p.out_count, *v);
      return OkStatus();
    }
    Reduce<T>(p, x.data<T>(), o);
    if constexpr (R::kMean) {
      for (int64_t i = 0; i < p.out_count; ++i) {
        if constexpr (std::is_floating_point_v<T>) {
          o[i] /= static_cast<T>(p.reduce_count);
        } else {
          o[i] = static_cast<T>(static_cast<int64_t>(o[i]) / p.reduce_count);
        }
      }
    }
    return OkStatus();
  }

  // Both the input and the output are non-empty here.
  template <typename T>
  static void Reduce(const ReductionPlan& p, const T* in, T* out) {
    using InMap = Eigen::Map<const RowMajorArray<T>>;
    Eigen::Map<Vec<T>> o(out, p.out_count);
    if constexpr (R::kPairwise && std::is_floating_point_v<T>) {
      if (p.reduce_count > 1) {
        ReducePairwise(p, in, out);
        return;
      }
    }
    if (p.reduce_count == 1) {  // nothing folds: the elements keep their order
      o = Eigen::Map<const Vec<T>>(in, p.out_count);
    } else if (p.out_count == 1) {
      out[0] = R::All(Eigen::Map<const Vec<T>>(in, p.reduce_count));
    } else if (p.dims.size() == 2 && p.reduced[1]) {
      o = R::Rows(InMap(in, p.out_count, p.reduce_count));
    } else if (p.dims.size() == 2 && p.reduced[0]) {
      // Columns: fold whole rows into the output, which stays contiguous.
      o = Eigen::Map<const Vec<T>>(in, p.out_count);
      for (int64_t r = 1; r < p.reduce_count; ++r) {
        R::Fold(o, Eigen::Map<const Vec<T>>(in + r * p.out_count, p.out_count));
      }
    } else {
      Vec<T> moved(p.out_count * p.reduce_count);
      MoveReducedLast(p, in, moved.data());
      o = R::Rows(InMap(moved.data(), p.out_count, p.reduce_count));
    }
  }

  // The same four layouts, summed pairwise.
  template <typename T>
  static void ReducePairwise(const ReductionPlan& p, const T* in, T* out) {
    if (p.out_count == 1) {
      out[0] = PairwiseSum(in, p.reduce_count);
    } else if (p.dims.size() == 2 && p.reduced[1]) {
      PairwiseRowSums(in, p.out_count, p.reduce_count, out);
    } else if (p.dims.size() == 2 && p.reduced[0]) {
      PairwiseColumnSums(in, p.reduce_count, p.out_count, out);
    } else {
      std::vector<T> moved(static_cast<size_t>(p.out_count * p.reduce_count));
      MoveReducedLast(p, in, moved.data());
      PairwiseRowSums(moved.data(), p.out_count, p.reduce_count, out);
    }
  }

  bool keep_dims_ = false;
};

Status ReductionShape(InferenceContext& c) {
  TFD_ASSIGN_OR_RETURN(bool keep_dims, c.GetAttr<bool>("keep_dims"));
  const PartialShape& in = c.input(0);
  if (c.input(1).rank_known() && c.input(1).rank() > 1) {
    return errors::InvalidArgument("reduction_indices (input 1) must be a scalar or a vector, "
                                   "but has shape ", c.input(1).ToString());
  }
  std::optional<std::vector<int64_t>> axes = c.InputAsInts(1);
  if (!in.rank_known() || !axes) {
    // Only keep_dims pins the rank without knowing the axes.
    c.set_output(0, keep_dims && in.rank_known() ? PartialShape::UnknownOfRank(in.rank())
                                                 : PartialShape::Unknown());
    return OkStatus();
  }
  TFD_ASSIGN_OR_RETURN(std::vector<bool> mask, ReductionMask(*axes, in.rank()));
  std::vector<int64_t> out;
  for (int d = 0; d < in.rank(); ++d) {
    if (!mask[d]) {
      out.push_back(in.dim(d));
    } else if (keep_dims) {
      out.push_back(1);
    }
  }
  c.set_output(0, PartialShape(std::move(out)));
  return OkStatus();
}

template <typename R>
Status AddReduction(OpRegistry& r, const char* name, const std::string& doc) {
  return r.Add<ReductionOp<R>>(
      OpDefBuilder(name)
          .Input("input: T")
          .Input("reduction_indices: Tidx")
          .Output("output: T")
          .Attr("keep_dims: bool = false")
          .Attr("T: {float32, float64, int32, int64, uint8}")
          .Attr("Tidx: {int32, int64} = int32")
          .Doc(doc +
               " reduction_indices is a scalar or vector of axes in [-rank, rank) (negative "
               "counts from the end, duplicates allowed, empty reduces nothing). Shape: input's "
               "shape without the reduced axes, or with them as 1 when keep_dims."),
      ReductionShape);
}

}  // namespace

Status RegisterReductionOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(AddReduction<SumReducer>(
      r, "Sum", "The sum of input's elements along the given axes (0 where there are none)."));
  TFD_RETURN_IF_ERROR(AddReduction<MeanReducer>(
      r, "Mean",
      "The mean of input's elements along the given axes; integers divide with truncation. "
      "Over no elements: NaN for floats, INVALID_ARGUMENT for integers."));
  TFD_RETURN_IF_ERROR(AddReduction<MaxReducer>(
      r, "Max",
      "The maximum of input's elements along the given axes; NaN where a NaN is among them. "
      "Over no elements: -inf for floats (as TensorFlow), INVALID_ARGUMENT for integers."));
  TFD_RETURN_IF_ERROR(AddReduction<MinReducer>(
      r, "Min",
      "The minimum of input's elements along the given axes; NaN where a NaN is among them. "
      "Over no elements: +inf for floats (as TensorFlow), INVALID_ARGUMENT for integers."));
  TFD_RETURN_IF_ERROR(AddReduction<ProdReducer>(
      r, "Prod", "The product of input's elements along the given axes (1 where there are none)."));
  return OkStatus();
}

}  // namespace tfd::kernels
