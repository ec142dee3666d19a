#include "api/sync_replicas.h"

#include "api/train_signature.h"
#include "common/gradients.h"

namespace tfd::train {
namespace {

using ops::AsOperation;

// One variable's accumulator, the push of a replica's gradient into it,
// the average the chief takes out and the op that sets its global step.
struct Accumulation {
  Operation push;
  GradAndVar average;
  Operation set_step;
};

// A dense gradient into a ConditionalAccumulator. The push is tagged with
// the global step read beside the parameters at the start of this step: a
// round that completes before the push makes it stale.
Accumulation AccumulateDense(const Scope& beside, const GradAndVar& gv, const Variable& step,
                             int replicas_to_aggregate) {
  const Variable& var = gv.var;
  const Output accum = ops::ConditionalAccumulator(beside.WithOpName("accumulator"), var.dtype(),
                                                   var.ref().shape,
                                                   var.name() + "/sync_accumulator");
  return {ops::AccumulatorApplyGradient(beside.WithOpName("push"), accum, step, gv.grad),
          {ops::AccumulatorTakeGradient(beside.WithOpName("average"), accum,
                                        replicas_to_aggregate, var.dtype()),
           var},
          ops::AccumulatorSetGlobalStep(beside.WithOpName("set_global_step"), accum, step)};
}

// A sparse gradient into a SparseConditionalAccumulator, rows and indices
// as they are: the push carries the rows the replica touched, never the
// table, and the chief applies the averaged rows with the optimizer's
// sparse update. The casts run beside the accumulator, so the indices
// cross as the replica made them.
Accumulation AccumulateSparse(const Scope& beside, const GradAndVar& gv, const Variable& step,
                              int replicas_to_aggregate) {
  const Variable& var = gv.var;
  const Scope helpers = beside.WithOpName("");
  const Output accum = ops::SparseConditionalAccumulator(
      beside.WithOpName("accumulator"), var.dtype(), var.ref().shape,
      var.name() + "/sync_sparse_accumulator");
  // Made one by one: the order of a call's arguments is unspecified, and
  // the helpers' generated names follow the order they are made in.
  const Output local_step = ops::AsOutput(helpers, step);
  const Output indices = ops::Cast(helpers, gv.sparse.indices, DType::kInt64);
  const Output dense_shape = ops::Cast(helpers, gv.sparse.dense_shape, DType::kInt64);
  const Operation push = ops::SparseAccumulatorApplyGradient(
      beside.WithOpName("push"), accum, local_step, indices, gv.sparse.values, dense_shape);
  // The accumulator's shape (the variable's) passes to the rows taken, so
  // they are shape-checked downstream.
  const ops::SparseAccumulated taken = ops::SparseAccumulatorTakeGradient(
      beside.WithOpName("average"), accum,
      ops::AsOutput(helpers, replicas_to_aggregate, DType::kInt32), var.dtype());
  GradAndVar average{Output(), var};
  if (taken.values.valid()) {
    average.sparse = IndexedSlices{taken.values, taken.indices, taken.dense_shape};
  }
  return {push, average,
          ops::AccumulatorSetGlobalStep(beside.WithOpName("set_global_step"), accum, step)};
}

}  // namespace

SyncReplicas::SyncReplicas(const Optimizer& optimizer, SyncReplicasOptions options)
    : optimizer_(optimizer), options_(std::move(options)) {
  if (options_.total_replicas <= 0) options_.total_replicas = options_.replicas_to_aggregate;
}

Status SyncReplicas::Check(const Variable& global_step) const {
  if (options_.replicas_to_aggregate < 1 ||
      options_.total_replicas < options_.replicas_to_aggregate) {
    return errors::InvalidArgument("SyncReplicas: replicas_to_aggregate ",
                                   options_.replicas_to_aggregate,
                                   " must be at least 1 and at most total_replicas ",
                                   options_.total_replicas);
  }
  if (!global_step.valid()) {
    return errors::InvalidArgument("SyncReplicas needs a global_step variable");
  }
  return OkStatus();
}

Operation SyncReplicas::Minimize(const Scope& scope, const Output& loss,
                                 const Variable& global_step) {
  if (!scope.ok()) return Operation();
  if (Status bad = Check(global_step); !bad.ok()) {
    scope.UpdateStatus(bad);
    return Operation();
  }
  auto grads = optimizer_.ComputeGradients(scope.WithOpName(""), loss);
  if (!grads.ok()) {
    scope.UpdateStatus(grads.status());
    return Operation();
  }
  return ApplyGradients(scope, *grads, global_step);
}

Operation SyncReplicas::ApplyGradients(const Scope& scope,
                                       const std::vector<GradAndVar>& grads_and_vars,
                                       const Variable& global_step) {
  namespace sig = signature;
  if (!scope.ok()) return Operation();
  if (Status bad = Check(global_step); !bad.ok()) {
    scope.UpdateStatus(bad);
    return Operation();
  }
  const Scope top = scope.WithOpName("").WithPrefix("");
  const Scope sync = top.WithName("sync");
  const std::string train_name = scope.op_name().empty() ? sig::kTrain : scope.op_name();

  // The round the replicas wait in lives beside global_step.
  const Scope beside_step = sync.ColocatedWith(global_step.ref());
  const Output round = ops::SyncRound(beside_step.WithOpName("round"), "sync_round");

  std::vector<Operation> pushes, set_steps;
  std::vector<GradAndVar> averaged;
  for (const GradAndVar& gv : grads_and_vars) {
    if (!gv.has_gradient()) continue;
    const Scope beside = sync.WithName(gv.var.name()).ColocatedWith(gv.var.ref());
    const Accumulation a =
        gv.sparse.valid()
            ? AccumulateSparse(beside, gv, global_step, options_.replicas_to_aggregate)
            : AccumulateDense(beside, gv, global_step, options_.replicas_to_aggregate);
    pushes.push_back(a.push);
    averaged.push_back(a.average);
    set_steps.push_back(a.set_step);
  }

  // Every replica but the chief: push, then wait in the round until the
  // update those gradients joined is applied, and go on from the step it
  // made. The wait is tagged with the same read of global_step as the
  // pushes: gradients found stale go on at once, and no replica can take
  // another's turn. When the chief stops (sync/release) every replica still
  // going gets the final step.
  const Output step = ops::SyncRoundWait(
      sync.WithControlDependencies(pushes).WithOpName("wait"), round, global_step.value());
  if (!step.valid()) return Operation();
  const Output next = ops::Identity(top.WithOpName(train_name), step);
  ops::Identity(top.WithOpName(sig::kGlobalStep), next);
  const Scope read_step = top.ColocatedWith(global_step.ref());

  // The chief instead pushes, takes the average of R gradients, applies it,
  // advances global_step and, through the round, lets the replicas whose
  // gradients it took go on. It never waits in the round itself: its next
  // step cannot start before this update is applied.
  const Operation apply =
      optimizer_.ApplyGradients(sync.WithOpName("apply"), averaged, global_step);
  std::vector<Operation> chief_ops = pushes;
  chief_ops.push_back(
      ops::SyncRoundAdvance(beside_step.WithOpName("hand_out"), round, apply.output(0)));
  const Operation chief_step = ops::Group(top.WithOpName(sig::kChiefStep), chief_ops);
  ops::Identity(read_step.WithControlDependencies({chief_step}).WithOpName(sig::kChiefGlobalStep),
                global_step.ref());
  set_steps.push_back(ops::SyncRoundReset(beside_step.WithOpName("reset"), round,
                                          global_step.value()));
  ops::Group(top.WithOpName(sig::kChiefInit), set_steps);
  // When the chief stops: the final step for every replica that may still wait.
  ops::SyncRoundRelease(read_step.WithOpName(sig::kRelease), round, global_step.value(),
                        static_cast<int64_t>(options_.total_replicas));
  return ops::AsOperation(next);
}

}  // namespace tfd::train
