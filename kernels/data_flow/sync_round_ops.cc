// The sync round's ops (sync_round.h): SyncRound (creates or finds the
// resource), SyncRoundWait (a replica; asynchronous: waits without holding a
// thread), and the chief's SyncRoundAdvance, SyncRoundReset and
// SyncRoundRelease.
//
// None has a gradient: their inputs are a handle and steps.
#include <string>

#include "common/op_kernel.h"
#include "kernels/data_flow/data_flow_ops_internal.h"
#include "kernels/data_flow/sync_round.h"

namespace tfd::kernels::data_flow {
namespace {

class SyncRoundOp : public OpKernel {
 public:
  explicit SyncRoundOp(OpKernelConstruction& c) : OpKernel(c) {
    c.SetStatus(c.GetAttr("container", &container_));
    c.SetStatus(c.GetAttr("shared_name", &shared_name_));
  }
  bool is_cheap() const override { return true; }

  void Compute(OpKernelContext& ctx) override {
    const std::string& name = shared_name_.empty() ? ctx.node().name : shared_name_;
    auto round = ctx.resources().LookupOrCreate<SyncRound>(
        container_, name, [&]() -> StatusOr<std::shared_ptr<SyncRound>> {
          return std::make_shared<SyncRound>(name);
        });
    TFD_OP_REQUIRES_OK(ctx, round.status());
    ctx.set_output_ref(0, *round);
  }

 private:
  std::string container_, shared_name_;
};

class SyncRoundWaitOp : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;

  void ComputeAsync(OpKernelContext& ctx, DoneCallback done) override {
    auto round = ctx.input_ref<SyncRound>(0);
    TFD_OP_REQUIRES_OK_ASYNC(ctx, round.status(), done);
    auto pushed_at = ScalarInput<int64_t>(ctx, 1, "pushed_at");
    TFD_OP_REQUIRES_OK_ASYNC(ctx, pushed_at.status(), done);
    (*round)->Wait(*pushed_at, &ctx.cancellation(),
                   [&ctx, done = std::move(done)](const Status& s, int64_t step) {
                     ctx.SetStatus(s);
                     if (s.ok()) ctx.set_output(0, Tensor::Scalar<int64_t>(step));
                     done();
                   });
  }
};

// SyncRoundAdvance, SyncRoundReset and SyncRoundRelease: the chief's. Each
// op registers the kernel with its own action.
enum class RoundAction { kAdvance, kReset, kRelease };

template <RoundAction kAction>
class SyncRoundSetOp : public OpKernel {
 public:
  explicit SyncRoundSetOp(OpKernelConstruction& c) : OpKernel(c) {}
  bool is_cheap() const override { return true; }

  void Compute(OpKernelContext& ctx) override {
    auto round = ctx.input_ref<SyncRound>(0);
    TFD_OP_REQUIRES_OK(ctx, round.status());
    auto step = ScalarInput<int64_t>(ctx, 1, "step");
    TFD_OP_REQUIRES_OK(ctx, step.status());
    if constexpr (kAction == RoundAction::kRelease) {
      auto passes = ScalarInput<int64_t>(ctx, 2, "passes");
      TFD_OP_REQUIRES_OK(ctx, passes.status());
      (*round)->Release(*step, *passes);
    } else if constexpr (kAction == RoundAction::kReset) {
      (*round)->Reset(*step);
    } else {
      (*round)->Advance(*step);
    }
  }
};

Status ScalarInputsShape(InferenceContext& c) {
  for (int i = 1; i < c.num_inputs(); ++i) TFD_RETURN_IF_ERROR(c.WithRank(i, 0));
  return shape_fns::NoOutputs(c);
}

Status WaitShape(InferenceContext& c) {
  TFD_RETURN_IF_ERROR(c.WithRank(1, 0));
  return shape_fns::Scalar(c);
}

}  // namespace

Status RegisterSyncRoundOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(
      r.Add<SyncRoundOp>(OpDefBuilder("SyncRound")
                             .Output("handle: Ref(string)")
                             .Attr("container: string = \"\"")
                             .Attr("shared_name: string = \"\"")
                             .SetIsStateful()
                             .Doc("Where synchronous replicas wait for the update their gradients "
                                  "went into: the "
                                  "global step of the last update applied (from 0), kept by the "
                                  "task beside "
                                  "global_step and found by container and shared_name (the node "
                                  "name when empty). "
                                  "Unlike a queue of tokens, a replica cannot take another's "
                                  "turn. Not "
                                  "checkpointed. Shape: a reference, no value shape."),
                         shape_fns::Unknown));
  TFD_RETURN_IF_ERROR(r.Add<SyncRoundWaitOp>(
      OpDefBuilder("SyncRoundWait")
          .Input("handle: Ref(string)")
          .Input("pushed_at: int64")
          .Output("step: int64")
          .SetIsStateful()
          .Doc("A replica whose gradients were tagged with global step "
               "pushed_at waits "
               "(without a thread) until an update past pushed_at is applied, "
               "and returns the "
               "round's step; at once when one already is (its gradients were "
               "stale, or their "
               "update is done) or a pass from SyncRoundRelease is left. "
               "SyncRoundReset and "
               "SyncRoundRelease end every wait. The step's cancellation or "
               "deadline ends it "
               "with their code. Shape: []; pushed_at must be a scalar."),
      WaitShape));
  TFD_RETURN_IF_ERROR(r.Add<SyncRoundSetOp<RoundAction::kAdvance>>(
      OpDefBuilder("SyncRoundAdvance")
          .Input("handle: Ref(string)")
          .Input("step: int64")
          .SetIsStateful()
          .Doc("The chief applied the update that made global step `step`: the "
               "replicas "
               "waiting with pushed_at below it go on. Passes left by a "
               "release are dropped. "
               "Shape: no outputs; step must be a scalar."),
      ScalarInputsShape));
  TFD_RETURN_IF_ERROR(r.Add<SyncRoundSetOp<RoundAction::kReset>>(
      OpDefBuilder("SyncRoundReset")
          .Input("handle: Ref(string)")
          .Input("step: int64")
          .SetIsStateful()
          .Doc("The chief starts (again) at global step "
               "`step`, perhaps restored: every "
               "waiting replica goes on, to push again "
               "at the step it reads then, and passes "
               "left by a release are dropped. Shape: no "
               "outputs; step must be a scalar."),
      ScalarInputsShape));
  TFD_RETURN_IF_ERROR(r.Add<SyncRoundSetOp<RoundAction::kRelease>>(
      OpDefBuilder("SyncRoundRelease")
          .Input("handle: Ref(string)")
          .Input("step: int64")
          .Input("passes: int64")
          .SetIsStateful()
          .Doc("The chief stops at global step `step`: every waiting replica "
               "goes on with it, "
               "and so do later waits until `passes` waits in all went by, so "
               "that each "
               "replica still running sees the end. Shape: no outputs; step "
               "and passes must be "
               "scalars."),
      ScalarInputsShape));
  return OkStatus();
}

}  // namespace tfd::kernels::data_flow
