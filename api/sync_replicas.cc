#include "api/sync_replicas.h"

#include "api/train_signature.h"

namespace tfd::train {
namespace {

using ops::AsOperation;

// `count` copies of the scalar `step` appended to the token queue, by an
// op named as `scope` says.
Operation EnqueueTokens(const Scope& scope, const Output& queue, const Output& step, int count) {
  const Scope helpers = scope.WithOpName("").WithName(scope.op_name());
  return ops::QueueEnqueueMany(scope, queue, {ops::Fill(helpers, ops::Input({count}), step)});
}

}  // namespace

SyncReplicas::SyncReplicas(const Optimizer& optimizer, SyncReplicasOptions options)
    : optimizer_(optimizer), options_(std::move(options)) {
  if (options_.total_replicas <= 0) options_.total_replicas = options_.replicas_to_aggregate;
}

Operation SyncReplicas::Minimize(const Scope& scope, const Output& loss,
                                 const Variable& global_step) {
  namespace sig = signature;
  if (!scope.ok()) return Operation();
  if (options_.replicas_to_aggregate < 1 ||
      options_.total_replicas < options_.replicas_to_aggregate) {
    scope.UpdateStatus(errors::InvalidArgument(
        "SyncReplicas: replicas_to_aggregate ", options_.replicas_to_aggregate,
        " must be at least 1 and at most total_replicas ", options_.total_replicas));
    return Operation();
  }
  if (!global_step.valid()) {
    scope.UpdateStatus(errors::InvalidArgument("SyncReplicas needs a global_step variable"));
    return Operation();
  }
  auto grads = optimizer_.ComputeGradients(scope.WithOpName(""), loss);
  if (!grads.ok()) {
    scope.UpdateStatus(grads.status());
    return Operation();
  }
  const Scope top = scope.WithOpName("").WithPrefix("");
  const Scope sync = top.WithName("sync");
  const std::string train_name = scope.op_name().empty() ? sig::kTrain : scope.op_name();

  // The token queue lives beside global_step.
  const Output tokens = ops::FIFOQueue(
      sync.ColocatedWith(global_step.ref()).WithOpName("token_queue"), {DType::kInt64},
      {PartialShape(std::vector<int64_t>{})}, /*capacity=*/-1, "sync_token_queue");

  std::vector<Operation> pushes, set_steps;
  std::vector<GradAndVar> averaged;
  for (const GradAndVar& gv : *grads) {
    if (!gv.has_gradient()) continue;
    const Variable& var = gv.var;
    const Scope beside = sync.WithName(var.name()).ColocatedWith(var.ref());
    // TODO(perf): a sparse gradient is densified before it is pushed; a
    // SparseConditionalAccumulator would keep the push as small as the rows.
    const Output grad = gv.sparse.valid() ? Densify(beside, gv.sparse) : gv.grad;
    const Output accum = ops::ConditionalAccumulator(
        beside.WithOpName("accumulator"), var.dtype(), var.ref().shape,
        var.name() + "/sync_accumulator");
    // Tagged with the global step read beside the parameters at the start
    // of this step: a round that completes before the push makes it stale.
    pushes.push_back(
        ops::AccumulatorApplyGradient(beside.WithOpName("push"), accum, global_step, grad));
    averaged.push_back({ops::AccumulatorTakeGradient(beside.WithOpName("average"), accum,
                                                     options_.replicas_to_aggregate, var.dtype()),
                        var});
    set_steps.push_back(ops::AccumulatorSetGlobalStep(beside.WithOpName("set_global_step"), accum,
                                                      global_step));
  }

  // Every replica but the chief: push, then wait for a token, which comes
  // when a round completes and carries the global step it produced. A
  // replica that takes a token left over from a round it missed goes on at
  // once with an older value; its next push is tagged with the step it reads
  // then, so it is not stale, and the tokens the chief hands out when it
  // stops (sync/release) carry the final step, so every replica still going
  // sees it.
  const std::vector<Output> token =
      ops::QueueDequeue(sync.WithControlDependencies(pushes).WithOpName("token"), tokens,
                        {DType::kInt64});
  if (token.empty()) return Operation();
  const Output next = ops::Identity(top.WithOpName(train_name), token[0]);
  ops::Identity(top.WithOpName(sig::kGlobalStep), next);
  const Scope read_step = top.ColocatedWith(global_step.ref());

  // The chief instead pushes, takes the average of R gradients, applies it,
  // advances global_step and hands out a token to each other replica. It
  // never waits for a token itself: its next step cannot start before this
  // round is done, and a token it waited for could be taken by a fast replica
  // that then waits for the round only the chief can run.
  const Operation apply =
      optimizer_.ApplyGradients(sync.WithOpName("apply"), averaged, global_step);
  std::vector<Operation> chief_ops = pushes;
  if (options_.total_replicas > 1) {
    chief_ops.push_back(EnqueueTokens(sync.ColocatedWith(global_step.ref()).WithOpName("hand_out"),
                                      tokens, apply.output(0), options_.total_replicas - 1));
  } else {
    chief_ops.push_back(apply);
  }
  const Operation chief_step = ops::Group(top.WithOpName(sig::kChiefStep), chief_ops);
  ops::Identity(read_step.WithControlDependencies({chief_step}).WithOpName(sig::kChiefGlobalStep),
                global_step.ref());
  ops::Group(top.WithOpName(sig::kChiefInit), set_steps);
  // When the chief stops: a token for every replica that may still wait.
  EnqueueTokens(read_step.WithOpName(sig::kRelease), tokens, global_step.value(),
                options_.total_replicas);
  return ops::AsOperation(next);
}

}  // namespace tfd::train
