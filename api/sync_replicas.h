// Synchronous data-parallel training, as tf.train.SyncReplicasOptimizer:
// every update of the parameters averages the gradients of N replicas.
//
// Each trainable variable gets a gradient accumulator beside it (on its ps
// task): a ConditionalAccumulator, or for a variable read only through
// gathers (a sparse gradient) a SparseConditionalAccumulator, so that a
// replica pushes the rows it touched and the chief applies the averaged rows
// with the optimizer's sparse update, never a whole table. A replica's step
// pushes its gradients, tagged with the global step it read with the
// parameters, and then waits in the sync round beside global_step
// (kernels/data_flow/sync_round.h) until the update those gradients joined
// is applied. The chief's step (signature::kChiefStep, run instead) pushes
// its own gradients, takes N gradients from each accumulator — waiting
// until N have arrived — applies their average with the wrapped optimizer,
// advances global_step and the round, which lets the waiting replicas into
// the next step with the step it made: what each reports and stops at.
//
// Stale gradients are dropped: an accumulator refuses a gradient tagged
// with a step older than its own (each take advances it), so a replica that
// was slower than N others (a backup worker, total_replicas >
// replicas_to_aggregate) loses that step's gradient, finds the round past
// it and goes on from the current step at once. Each replica (the task
// whose session runs the step) counts once per round: its second gradient
// before the take is dropped, also when its task restarted in between.
//
// TensorFlow parks the replicas on a queue of tokens, one per replica per
// update; a token fits any replica, so with each replica counted once a
// fast replica could take a slow one's token and leave it waiting for an
// update that needs its gradient. A replica here waits for its own
// gradients' update, which no other can take. Unlike TensorFlow there is
// no chief queue-runner thread either: the aggregation is part of the
// chief's own step, so one session loop drives it, and the chief never
// waits in the round. The ops it builds are named by
// api/train_signature.h, which is how `tfctl train` finds them:
//
//   train::SyncReplicas sync(train::GradientDescent(0.001),
//                            {.replicas_to_aggregate = 2, .total_replicas = 2});
//   Operation train = sync.Minimize(root.WithOpName("train"), loss, global_step);
//
// Thread-safety: as Scope.
#pragma once

#include <string>
#include <vector>

#include "api/optimizers.h"

namespace tfd::train {

struct SyncReplicasOptions {
  int replicas_to_aggregate = 1;  // gradients averaged per update
  int total_replicas = 0;         // replicas running; 0: replicas_to_aggregate
};

class SyncReplicas {
 public:
  // `optimizer` must outlive Minimize.
  SyncReplicas(const Optimizer& optimizer, SyncReplicasOptions options);

  // The replica's train op (named scope.op_name() or "train"): push the
  // gradients of `loss`, wait for their update. Also builds the chief's step, the
  // chief's initializer, the release op, and signature::kGlobalStep (the
  // step the replica goes on from). Errors go to the scope.
  Operation Minimize(const Scope& scope, const Output& loss, const Variable& global_step);
  // The same ops for gradients computed already (the wrapped optimizer's
  // ComputeGradients, perhaps changed): Minimize is ComputeGradients then
  // this. Pairs without a gradient are skipped.
  Operation ApplyGradients(const Scope& scope, const std::vector<GradAndVar>& grads_and_vars,
                           const Variable& global_step);

 private:
  // INVALID_ARGUMENT for impossible options or a missing global_step.
  Status Check(const Variable& global_step) const;

  const Optimizer& optimizer_;
  SyncReplicasOptions options_;
};

}  // namespace tfd::train
