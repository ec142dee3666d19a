// Synchronous data-parallel training, as tf.train.SyncReplicasOptimizer:
// every update of the parameters averages the gradients of N replicas.
//
// Each trainable variable gets a gradient accumulator beside it (on its ps
// task). A replica's step pushes its gradients, tagged with the global step
// they were computed at, and then parks on a token queue. The chief's step
// additionally takes N gradients from each accumulator — waiting until N
// have arrived — applies their average with the wrapped optimizer, advances
// global_step, and puts one token per replica (carrying the new step) on
// the queue, which releases every parked replica into the next step.
//
// Stale gradients are dropped: an accumulator refuses a gradient computed
// at a step older than its own, so a replica that was slower than N others
// (a backup worker, total_replicas > replicas_to_aggregate) loses that
// step's gradient and continues from the current step.
//
// Unlike TensorFlow there is no chief queue-runner thread: the chief's
// aggregation is a second target of its own step (signature::kChiefStep),
// so one session loop drives it. The ops it builds are named by
// api/train_signature.h, which is how `tfctl train` finds them:
//
//   train::SyncReplicas sync(train::GradientDescent(0.001),
//                            {.replicas_to_aggregate = 2, .total_replicas = 2});
//   Operation train = sync.Minimize(root.WithOpName("train"), loss, global_step);
//
// The replica's local step is a local variable on `worker_device`, so one
// graph file serves every worker.
//
// Thread-safety: as Scope.
#pragma once

#include <string>

#include "api/optimizers.h"

namespace tfd::train {

struct SyncReplicasOptions {
  int replicas_to_aggregate = 1;  // gradients averaged per update
  int total_replicas = 0;         // replicas running; 0: replicas_to_aggregate
  std::string worker_device = "/job:worker";
};

class SyncReplicas {
 public:
  // `optimizer` must outlive Minimize.
  SyncReplicas(const Optimizer& optimizer, SyncReplicasOptions options);

  // The replica's train op (named scope.op_name() or "train"): push the
  // gradients of `loss`, wait for the token, take its step. Also builds the
  // chief's step, the chief and worker initializers, the release op, and
  // signature::kGlobalStep (the step the replica continues at). Errors go
  // to the scope.
  Operation Minimize(const Scope& scope, const Output& loss, const Variable& global_step);

 private:
  const Optimizer& optimizer_;
  SyncReplicasOptions options_;
};

}  // namespace tfd::train
