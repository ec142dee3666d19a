// Sparse gradient accumulator ops for synchronous replicas, as TensorFlow's:
// SparseConditionalAccumulator (creates or finds the resource),
// SparseAccumulatorApplyGradient, SparseAccumulatorTakeGradient
// (asynchronous: waits without holding a thread). AccumulatorNumAccumulated
// and AccumulatorSetGlobalStep (accumulator_ops.cc) take either kind.
//
// None has a gradient, and none needs to declare that: a take's inputs are
// the handle and num_required, so no path from a trainable tensor runs
// through one.
#include <spdlog/logger.h>

#include <string>

#include "common/op_kernel.h"
#include "kernels/data_flow/data_flow_ops_internal.h"
#include "kernels/data_flow/sparse_conditional_accumulator.h"

namespace tfd::kernels::data_flow {
namespace {

// The sparse accumulator behind input 0, checked against the op's dtype attr.
StatusOr<std::shared_ptr<SparseConditionalAccumulator>> SparseAccumulatorInput(
    const OpKernelContext& ctx, DType dtype) {
  TFD_ASSIGN_OR_RETURN(auto acc, ctx.input_ref<SparseConditionalAccumulator>(0));
  if (dtype != acc->dtype()) {
    return errors::InvalidArgument("sparse accumulator '", acc->name(), "' holds ",
                                   DTypeName(acc->dtype()), " gradients but the op expects ",
                                   DTypeName(dtype));
  }
  return acc;
}

StatusOr<SparseReduction> ParseReduction(const std::string& s) {
  if (s == "MEAN") return SparseReduction::kMean;
  if (s == "SUM") return SparseReduction::kSum;
  return errors::InvalidArgument("reduction_type must be \"MEAN\" or \"SUM\" but is \"", s, "\"");
}

class SparseConditionalAccumulatorOp : public OpKernel {
 public:
  explicit SparseConditionalAccumulatorOp(OpKernelConstruction& c) : OpKernel(c) {
    std::string reduction;
    c.SetStatus(c.GetAttr("dtype", &dtype_));
    c.SetStatus(c.GetAttr("shape", &shape_));
    c.SetStatus(c.GetAttr("container", &container_));
    c.SetStatus(c.GetAttr("shared_name", &shared_name_));
    c.SetStatus(c.GetAttr("reduction_type", &reduction));
    auto parsed = ParseReduction(reduction);
    c.SetStatus(parsed.status());
    if (parsed.ok()) reduction_ = *parsed;
    if (shape_.rank() == 0) {
      c.SetStatus(errors::InvalidArgument("a sparse accumulator's shape needs rows (rank >= 1) "
                                          "but is a scalar"));
    }
  }
  bool is_cheap() const override { return true; }

  void Compute(OpKernelContext& ctx) override {
    const std::string& name = shared_name_.empty() ? ctx.node().name : shared_name_;
    auto acc = ctx.resources().LookupOrCreate<SparseConditionalAccumulator>(
        container_, name, [&]() -> StatusOr<std::shared_ptr<SparseConditionalAccumulator>> {
          return std::make_shared<SparseConditionalAccumulator>(name, dtype_, shape_, reduction_);
        });
    TFD_OP_REQUIRES_OK(ctx, acc.status());
    TFD_OP_REQUIRES_OK(ctx, (*acc)->CheckSameSpec(dtype_, shape_, reduction_));
    ctx.set_output_ref(0, *acc);
  }

 private:
  DType dtype_ = DType::kInvalid;
  PartialShape shape_;
  std::string container_, shared_name_;
  SparseReduction reduction_ = SparseReduction::kMean;
};

// gradient_shape as a shape, when has_known_shape.
StatusOr<std::optional<TensorShape>> GradientShape(const OpKernelContext& ctx, bool known,
                                                   const std::string& acc) {
  if (!known) return std::optional<TensorShape>();
  const Tensor& t = ctx.input(4);
  if (t.dtype() != DType::kInt64 || t.rank() != 1) {
    return errors::InvalidArgument("gradient_shape for sparse accumulator '", acc,
                                   "' must be an int64 vector but is ", t.Describe());
  }
  std::vector<int64_t> dims(t.data<int64_t>(), t.data<int64_t>() + t.num_elements());
  auto shape = TensorShape::Make(std::move(dims));
  if (!shape.ok()) {
    return errors::InvalidArgument("gradient_shape for sparse accumulator '", acc,
                                   "': ", shape.status().message());
  }
  return std::optional<TensorShape>(std::move(*shape));
}

class SparseApplyGradientOp : public OpKernel {
 public:
  explicit SparseApplyGradientOp(OpKernelConstruction& c) : OpKernel(c) {
    c.SetStatus(c.GetAttr("dtype", &dtype_));
    c.SetStatus(c.GetAttr("has_known_shape", &has_known_shape_));
  }

  void Compute(OpKernelContext& ctx) override {
    auto acc = SparseAccumulatorInput(ctx, dtype_);
    TFD_OP_REQUIRES_OK(ctx, acc.status());
    auto local_step = ScalarInput<int64_t>(ctx, 1, "local_step");
    TFD_OP_REQUIRES_OK(ctx, local_step.status());
    auto dense_shape = GradientShape(ctx, has_known_shape_, (*acc)->name());
    TFD_OP_REQUIRES_OK(ctx, dense_shape.status());
    const SparseGradient g{ctx.input(2), ctx.input(3), std::move(*dense_shape)};
    auto result = (*acc)->Apply(*local_step, g, ctx.step().master);
    TFD_OP_REQUIRES_OK(ctx, result.status());
    if (*result != AccumulatorApplyResult::kAccumulated && ctx.env().logger) {
      // Normal in synchronous training, as for the dense accumulator.
      const bool stale = *result == AccumulatorApplyResult::kStale;
      ctx.env().logger->debug("{}: dropped a {} sparse gradient (local step {}{}): {}",
                              ctx.node().name, stale ? "stale" : "second", *local_step,
                              stale ? "" : ", from " + std::string(ctx.step().master),
                              (*acc)->DebugString());
    }
  }

 private:
  DType dtype_ = DType::kInvalid;
  bool has_known_shape_ = false;
};

// The dense shape a take reports: the accumulator's where known, else what
// the gradients said, else (dimension 0) one past the largest index.
Tensor TakenShape(const SparseConditionalAccumulator& acc, const SparseGradient& g) {
  const TensorShape row = [&] {
    TensorShape r = g.values.shape();
    r.RemoveDim(0);
    return r;
  }();
  std::vector<int64_t> dims;
  if (auto known = acc.shape().AsTensorShape()) {
    dims = known->dims();
  } else if (g.dense_shape) {
    dims = g.dense_shape->dims();
  } else {
    const int64_t n = g.indices.num_elements();
    dims = {n == 0 ? 0 : g.indices.data<int64_t>()[n - 1] + 1};  // indices are sorted
    dims.insert(dims.end(), row.dims().begin(), row.dims().end());
  }
  return Tensor::FromVector<int64_t>(dims);
}

class SparseTakeGradientOp : public AsyncOpKernel {
 public:
  explicit SparseTakeGradientOp(OpKernelConstruction& c) : AsyncOpKernel(c) {
    c.SetStatus(c.GetAttr("dtype", &dtype_));
  }

  void ComputeAsync(OpKernelContext& ctx, DoneCallback done) override {
    auto acc = SparseAccumulatorInput(ctx, dtype_);
    TFD_OP_REQUIRES_OK_ASYNC(ctx, acc.status(), done);
    auto num_required = ScalarInput<int32_t>(ctx, 1, "num_required");
    TFD_OP_REQUIRES_OK_ASYNC(ctx, num_required.status(), done);
    TFD_OP_REQUIRES_OK_ASYNC(
        ctx,
        *num_required >= 1 ? OkStatus()
                           : errors::InvalidArgument("num_required must be >= 1 but is ",
                                                     *num_required, " (sparse accumulator '",
                                                     (*acc)->name(), "')"),
        done);
    (*acc)->TakeAverage(*num_required, &ctx.cancellation(),
                        [&ctx, acc = *acc, done = std::move(done)](const Status& s,
                                                                   SparseGradient average) {
                          ctx.SetStatus(s);
                          if (s.ok()) {
                            ctx.set_output(2, TakenShape(*acc, average));
                            ctx.set_output(0, std::move(average.indices));
                            ctx.set_output(1, std::move(average.values));
                          }
                          done();
                        });
  }

 private:
  DType dtype_ = DType::kInvalid;
};

Status SparseApplyGradientShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(c.WithRank(1, 0));
  TFD_RETURN_IF_ERROR(c.WithRank(2, 1));
  TFD_RETURN_IF_ERROR(c.WithRank(4, 1));
  return shape_fns::NoOutputs(c);
}

// indices [n], values [n, row...] (the row from the shape attr, when the
// graph builder passes the accumulator's), shape [rank].
Status SparseTakeGradientShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(c.WithRank(1, 0));
  if (auto n = c.InputAsInts(1); n && n->size() == 1 && (*n)[0] < 1) {
    return errors::InvalidArgument("num_required must be >= 1 but is ", (*n)[0]);
  }
  TFD_ASSIGN_OR_RETURN(PartialShape shape, c.GetAttr<PartialShape>("shape"));
  c.set_output(0, PartialShape({-1}));
  if (shape.rank_known() && shape.rank() >= 1) {
    std::vector<int64_t> values = shape.dims();
    values[0] = -1;
    c.set_output(1, PartialShape(std::move(values)));
    c.set_output(2, PartialShape({shape.rank()}));
  } else {
    c.set_output(1, PartialShape());
    c.set_output(2, PartialShape({-1}));
  }
  return OkStatus();
}

}  // namespace

Status RegisterSparseAccumulatorOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<SparseConditionalAccumulatorOp>(
      OpDefBuilder("SparseConditionalAccumulator")
          .Output("handle: Ref(string)")
          .Attr("dtype: {float32, float64}")
          .Attr("shape: shape")
          .Attr("container: string = \"\"")
          .Attr("shared_name: string = \"\"")
          .Attr("reduction_type: string = \"MEAN\"")
          .SetIsStateful()
          .Doc("Sums sparse gradients (rows and their indices) for synchronous replicas, "
               "keeping them sparse: rows of equal index add up; a global step (from 0) as "
               "ConditionalAccumulator's. Kept by the task, found by container and shared_name "
               "(the node name when empty). shape is the variable's (rank >= 1): rows fit "
               "its dimensions past the first, indices lie in [0, shape[0]). reduction_type "
               "MEAN divides the rows taken by the number of gradients taken, SUM does not. "
               "Not differentiable. Shape: a reference, no value shape."),
      shape_fns::Unknown));
  TFD_RETURN_IF_ERROR(r.Add<SparseApplyGradientOp>(
      OpDefBuilder("SparseAccumulatorApplyGradient")
          .Input("handle: Ref(string)")
          .Input("local_step: int64")
          .Input("gradient_indices: int64")
          .Input("gradient_values: dtype")
          .Input("gradient_shape: int64")
          .Attr("dtype: {float32, float64}")
          .Attr("has_known_shape: bool")
          .SetIsStateful()
          .Doc("Adds the rows gradient_values[i] at gradient_indices[i] (gradient_shape is "
               "the dense shape, read when has_known_shape) to a SparseConditionalAccumulator, "
               "or drops them as AccumulatorApplyGradient drops a stale or second gradient. "
               "INVALID_ARGUMENT naming the accumulator for a row count other than the index "
               "count, rows that do not fit the accumulator's shape or the rows already in, "
               "or an index outside [0, rows). Shape: no outputs; local_step a scalar, "
               "gradient_indices and gradient_shape vectors."),
      SparseApplyGradientShape));
  TFD_RETURN_IF_ERROR(r.Add<SparseTakeGradientOp>(
      OpDefBuilder("SparseAccumulatorTakeGradient")
          .Input("handle: Ref(string)")
          .Input("num_required: int32")
          .Output("indices: int64")
          .Output("values: dtype")
          .Output("shape: int64")
          .Attr("dtype: {float32, float64}")
          .Attr("shape: shape = <unknown>")
          .SetIsStateful()
          .Doc("Waits (without a thread) until at least num_required (>= 1) gradients are in "
               "a SparseConditionalAccumulator, then returns the rows they touched, sorted by "
               "index, reduced by its reduction_type, with the dense shape; empties it and adds "
               "1 to its global step, at once. Concurrent takes are served in arrival order; "
               "the step's cancellation or deadline ends the wait. Shape: indices [?], values "
               "[?, row...] and shape [rank] from the shape attr (the accumulator's, when the "
               "graph builder passes it; unknown by default)."),
      SparseTakeGradientShape));
  return OkStatus();
}

}  // namespace tfd::kernels::data_flow
