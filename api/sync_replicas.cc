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

  // The replica's step: the global step its gradients belong to.
  const Variable local_step(sync.WithOpName("local_step").WithDevice(options_.worker_device),
                            TensorShape(), DType::kInt64, ops::Initializer::Zeros(),
                            ops::VariableOptions{.trainable = false, .local = true});

  // The token queue lives beside global_step.
  const Output tokens = ops::FIFOQueue(
      sync.ColocatedWith(global_step.ref()).WithOpName("token_queue"), {DType::kInt64},
      {PartialShape(std::vector<int64_t>{})}, /*capacity=*/-1, "sync_token_queue");

  std::vector<Operation> pushes, takes_applied, set_steps;
  std::vector<GradAndVar> averaged;
  for (const GradAndVar& gv : *grads) {
    if (!gv.grad.valid()) continue;
    const Variable& var = gv.var;
    const Scope beside = sync.WithName(var.name()).ColocatedWith(var.ref());
    const Output accum = ops::ConditionalAccumulator(
        beside.WithOpName("accumulator"), var.dtype(), var.ref().shape,
        var.name() + "/sync_accumulator");
    pushes.push_back(
        ops::AccumulatorApplyGradient(beside.WithOpName("push"), accum, local_step, gv.grad));
    averaged.push_back({ops::AccumulatorTakeGradient(beside.WithOpName("average"), accum,
                                                     options_.replicas_to_aggregate, var.dtype()),
                        var});
    set_steps.push_back(ops::AccumulatorSetGlobalStep(beside.WithOpName("set_global_step"), accum,
                                                      global_step));
  }

  // The chief: average, apply, advance global_step, release the replicas.
  const Operation apply =
      optimizer_.ApplyGradients(sync.WithOpName("apply"), averaged, global_step);
  const Output new_step = apply.output(0);  // global_step after the update
  const Scope top_at_step = top.ColocatedWith(global_step.ref());
  EnqueueTokens(top_at_step.WithOpName(sig::kChiefStep), tokens, new_step,
                options_.total_replicas);
  ops::Group(top.WithOpName(sig::kChiefInit), set_steps);
  EnqueueTokens(top_at_step.WithOpName(sig::kRelease), tokens, global_step.value(),
                options_.total_replicas);

  // Every replica: start at the current global step; each step push, then
  // wait for the token that says which step comes next.
  ops::Assign(top.WithOpName(sig::kWorkerInit), local_step.ref(), global_step.value());
  const std::vector<Output> token =
      ops::QueueDequeue(sync.WithControlDependencies(pushes).WithOpName("token"), tokens,
                        {DType::kInt64});
  if (token.empty()) return Operation();
  const Output next = ops::Assign(top.WithOpName(train_name), local_step.ref(), token[0]);
  ops::Identity(top.WithOpName(sig::kGlobalStep), next);
  return AsOperation(next);
}

}  // namespace tfd::train
