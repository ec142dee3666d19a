// Gradient accumulator ops for synchronous replicas: ConditionalAccumulator
// (creates or finds the resource), AccumulatorApplyGradient,
// AccumulatorTakeGradient (asynchronous: waits without holding a thread),
// AccumulatorNumAccumulated, AccumulatorSetGlobalStep.
//
// None has a gradient, and none needs to declare that: the only input of a
// take is the handle, so no path from a trainable tensor runs through one.
#include <spdlog/logger.h>

#include <string>

#include "common/op_kernel.h"
#include "kernels/data_flow/conditional_accumulator.h"
#include "kernels/data_flow/data_flow_ops_internal.h"

namespace tfd::kernels::data_flow {
namespace {

// The accumulator behind input 0, checked against the op's dtype attr.
StatusOr<std::shared_ptr<ConditionalAccumulator>> AccumulatorInput(const OpKernelContext& ctx,
                                                                   DType dtype) {
  TFD_ASSIGN_OR_RETURN(auto acc, ctx.input_ref<ConditionalAccumulator>(0));
  if (dtype != DType::kInvalid && dtype != acc->dtype()) {
    return errors::InvalidArgument("accumulator '", acc->name(), "' holds ",
                                   DTypeName(acc->dtype()), " gradients but the op expects ",
                                   DTypeName(dtype));
  }
  return acc;
}

class ConditionalAccumulatorOp : public OpKernel {
 public:
  explicit ConditionalAccumulatorOp(OpKernelConstruction& c) : OpKernel(c) {
    c.SetStatus(c.GetAttr("dtype", &dtype_));
    c.SetStatus(c.GetAttr("shape", &shape_));
    c.SetStatus(c.GetAttr("container", &container_));
    c.SetStatus(c.GetAttr("shared_name", &shared_name_));
  }
  bool is_cheap() const override { return true; }

  void Compute(OpKernelContext& ctx) override {
    const std::string& name = shared_name_.empty() ? ctx.node().name : shared_name_;
    auto acc = ctx.resources().LookupOrCreate<ConditionalAccumulator>(
        container_, name, [&]() -> StatusOr<std::shared_ptr<ConditionalAccumulator>> {
          return std::make_shared<ConditionalAccumulator>(name, dtype_, shape_);
        });
    TFD_OP_REQUIRES_OK(ctx, acc.status());
    TFD_OP_REQUIRES_OK(ctx, (*acc)->CheckSameSpec(dtype_, shape_));
    ctx.set_output_ref(0, *acc);
  }

 private:
  DType dtype_ = DType::kInvalid;
  PartialShape shape_;
  std::string container_, shared_name_;
};

class ApplyGradientOp : public OpKernel {
 public:
  explicit ApplyGradientOp(OpKernelConstruction& c) : OpKernel(c) {
    c.SetStatus(c.GetAttr("dtype", &dtype_));
  }

  void Compute(OpKernelContext& ctx) override {
    auto acc = AccumulatorInput(ctx, dtype_);
    TFD_OP_REQUIRES_OK(ctx, acc.status());
    auto local_step = ScalarInput<int64_t>(ctx, 1, "local_step");
    TFD_OP_REQUIRES_OK(ctx, local_step.status());
    auto result = (*acc)->Apply(*local_step, ctx.input(2), ctx.step().master);
    TFD_OP_REQUIRES_OK(ctx, result.status());
    if (*result != ConditionalAccumulator::ApplyResult::kAccumulated && ctx.env().logger) {
      // Normal in synchronous training (a replica that fell behind, or one
      // that restarted within a round), so not a warning; the counts are in
      // the accumulator's DebugString.
      const bool stale = *result == ConditionalAccumulator::ApplyResult::kStale;
      ctx.env().logger->debug("{}: dropped a {} gradient (local step {}{}): {}", ctx.node().name,
                              stale ? "stale" : "second", *local_step,
                              stale ? "" : ", from " + std::string(ctx.step().master),
                              (*acc)->DebugString());
    }
  }

 private:
  DType dtype_ = DType::kInvalid;
};

class TakeGradientOp : public AsyncOpKernel {
 public:
  explicit TakeGradientOp(OpKernelConstruction& c) : AsyncOpKernel(c) {
    c.SetStatus(c.GetAttr("dtype", &dtype_));
    c.SetStatus(c.GetAttr("shape", &shape_));
  }

  void ComputeAsync(OpKernelContext& ctx, DoneCallback done) override {
    auto acc = AccumulatorInput(ctx, dtype_);
    TFD_OP_REQUIRES_OK_ASYNC(ctx, acc.status(), done);
    auto num_required = ScalarInput<int32_t>(ctx, 1, "num_required");
    TFD_OP_REQUIRES_OK_ASYNC(ctx, num_required.status(), done);
    TFD_OP_REQUIRES_OK_ASYNC(
        ctx,
        *num_required >= 1 ? OkStatus()
                           : errors::InvalidArgument("num_required must be >= 1 but is ",
                                                     *num_required, " (accumulator '",
                                                     (*acc)->name(), "')"),
        done);
    TFD_OP_REQUIRES_OK_ASYNC(
        ctx,
        shape_.IsCompatibleWith((*acc)->shape())
            ? OkStatus()
            : errors::InvalidArgument("accumulator '", (*acc)->name(), "' holds gradients of shape ",
                                      (*acc)->shape().ToString(), " but the op declares ",
                                      shape_.ToString()),
        done);
    (*acc)->TakeAverage(*num_required, &ctx.cancellation(),
                        [&ctx, shape = shape_, done = std::move(done)](const Status& s,
                                                                       Tensor average) {
                          ctx.SetStatus(s);
                          if (s.ok() && !shape.IsCompatibleWith(average.shape())) {
                            // The graph promised a shape the accumulator does not
                            // hold; the average is gone, as the take happened.
                            ctx.SetStatus(errors::InvalidArgument(
                                "the average has shape ", average.shape().ToString(),
                                " but the op declares ", shape.ToString()));
                          } else if (s.ok()) {
                            ctx.set_output(0, std::move(average));
                          }
                          done();
                        });
  }

 private:
  DType dtype_ = DType::kInvalid;
  PartialShape shape_;
};

// Of either kind, dense or sparse.
class NumAccumulatedOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool is_cheap() const override { return true; }
  void Compute(OpKernelContext& ctx) override {
    auto acc = ctx.input_ref<GradientAccumulator>(0);
    TFD_OP_REQUIRES_OK(ctx, acc.status());
    Tensor* out;
    TFD_OP_REQUIRES_OK(ctx, ctx.allocate_output(0, TensorShape(), &out));
    out->scalar<int32_t>() = static_cast<int32_t>((*acc)->num_accumulated());
  }
};

// Of either kind, dense or sparse.
class SetGlobalStepOp : public OpKernel {
 public:
  using OpKernel::OpKernel;
  bool is_cheap() const override { return true; }
  void Compute(OpKernelContext& ctx) override {
    auto acc = ctx.input_ref<GradientAccumulator>(0);
    TFD_OP_REQUIRES_OK(ctx, acc.status());
    auto step = ScalarInput<int64_t>(ctx, 1, "new_global_step");
    TFD_OP_REQUIRES_OK(ctx, step.status());
    const int64_t discarded = (*acc)->SetGlobalStep(*step);
    if (discarded > 0 && ctx.env().logger) {
      ctx.env().logger->info("{}: discarded {} gradients older than step {} from accumulator '{}'",
                             ctx.node().name, discarded, *step, (*acc)->name());
    }
  }
};

// The accumulator's shape lives on its own node, out of reach here: the
// take's output shape is what its `shape` attr says (unknown by default). A
// constant num_required below 1 is refused here already, as the kernel would.
Status TakeGradientShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(c.WithRank(1, 0));
  if (auto n = c.InputAsInts(1); n && n->size() == 1 && (*n)[0] < 1) {
    return errors::InvalidArgument("num_required must be >= 1 but is ", (*n)[0]);
  }
  TFD_ASSIGN_OR_RETURN(PartialShape shape, c.GetAttr<PartialShape>("shape"));
  c.set_output(0, std::move(shape));
  return OkStatus();
}

Status ApplyGradientShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(c.WithRank(1, 0));
  return shape_fns::NoOutputs(c);
}

Status SetGlobalStepShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(c.WithRank(1, 0));
  return shape_fns::NoOutputs(c);
}

}  // namespace

Status RegisterAccumulatorOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(r.Add<ConditionalAccumulatorOp>(
      OpDefBuilder("ConditionalAccumulator")
          .Output("handle: Ref(string)")
          .Attr("dtype: {float32, float64}")
          .Attr("shape: shape")
          .Attr("container: string = \"\"")
          .Attr("shared_name: string = \"\"")
          .SetIsStateful()
          .Doc("Averages gradients for synchronous replicas: a sum, a count and a global step "
               "(from 0) kept by the task, found by container and shared_name (the node name "
               "when empty). Every gradient must fit shape. Not differentiable. Shape: a "
               "reference, no value shape."),
      shape_fns::Unknown));
  TFD_RETURN_IF_ERROR(r.Add<ApplyGradientOp>(
      OpDefBuilder("AccumulatorApplyGradient")
          .Input("handle: Ref(string)")
          .Input("local_step: int64")
          .Input("gradient: dtype")
          .Attr("dtype: {float32, float64}")
          .SetIsStateful()
          .Doc("Adds gradient to the accumulator, or drops it (not an error; counted and "
               "logged at debug level) when local_step is below the accumulator's global step, "
               "or when the same replica (the task whose session runs the step) already has a "
               "gradient in since the last take: each replica counts once per update, also "
               "after its task restarted. A session in one process names no replica. "
               "INVALID_ARGUMENT when its shape does not fit the accumulator's shape or the "
               "gradients already in. Shape: no outputs; local_step must be a scalar."),
      ApplyGradientShape));
  TFD_RETURN_IF_ERROR(r.Add<TakeGradientOp>(
      OpDefBuilder("AccumulatorTakeGradient")
          .Input("handle: Ref(string)")
          .Input("num_required: int32")
          .Output("average: dtype")
          .Attr("dtype: {float32, float64}")
          .Attr("shape: shape = <unknown>")
          .SetIsStateful()
          .Doc("Waits (without a thread) until at least num_required (>= 1) gradients are in, "
               "then returns their average, empties the accumulator and adds 1 to its global "
               "step, all at once, so gradients of the old step arriving later are stale. "
               "Concurrent takes are served in arrival order; the step's cancellation or "
               "deadline ends the wait. Shape: the shape attr (the accumulator's, when the "
               "graph builder passes it; unknown by default); num_required must be a scalar."),
      TakeGradientShape));
  TFD_RETURN_IF_ERROR(r.Add<NumAccumulatedOp>(
      OpDefBuilder("AccumulatorNumAccumulated")
          .Input("handle: Ref(string)")
          .Output("num_accumulated: int32")
          .SetIsStateful()
          .Doc("The number of gradients accumulated since the last take, by a "
               "ConditionalAccumulator or a SparseConditionalAccumulator. Shape: []."),
      shape_fns::Scalar));
  TFD_RETURN_IF_ERROR(r.Add<SetGlobalStepOp>(
      OpDefBuilder("AccumulatorSetGlobalStep")
          .Input("handle: Ref(string)")
          .Input("new_global_step: int64")
          .SetIsStateful()
          .Doc("Sets the global step of a ConditionalAccumulator or a "
               "SparseConditionalAccumulator (the chief, after restoring a checkpoint); "
               "gradients already accumulated at a lower local step are discarded. Shape: no "
               "outputs; new_global_step must be a scalar."),
      SetGlobalStepShape));
  return OkStatus();
}

}  // namespace tfd::kernels::data_flow
