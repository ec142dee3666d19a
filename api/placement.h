// Parameter placement across ps tasks: device functions for
// Scope::WithDeviceFunction that put each variable on a ps task and
// everything else on the worker, as tf.train.replica_device_setter does.
//
//   Scope root = Scope::NewRootScope(registry)
//       .WithDeviceFunction(train::ReplicaDeviceSetter({.ps_tasks = 2}));
//   Variable w1(root.WithOpName("w1"), ...);   // /job:ps/task:0
//   Variable b1(root.WithOpName("b1"), ...);   // /job:ps/task:1
//
// Two strategies choose the ps task of each variable, in creation order:
// round robin (TensorFlow's default: in the classic two-ps model every weight
// lands on one task and every bias on the other) and greedy by bytes (each
// variable goes to the task holding the fewest bytes so far, which spreads
// the large weights). Nodes the variable owns (initializer, read, optimizer
// slots) are colocated with it by api/variables.h and api/optimizers.h.
//
// A device the node already requests (from Scope::WithDevice) wins over the
// chosen one part by part, as in TensorFlow.
//
// Thread-safety: the returned function keeps its own counters; use it from
// the one thread building the graph.
#pragma once

#include <string>
#include <vector>

#include "common/scope.h"

namespace tfd::train {

enum class PsStrategy {
  kRoundRobin,   // the i-th variable on task i mod ps_tasks
  kGreedyBytes,  // each variable on the task with the fewest bytes so far
};

struct ReplicaDeviceSetterOptions {
  // 0: no ps job; variables go to worker_device like everything else.
  int ps_tasks = 0;
  std::string ps_device = "/job:ps";
  // A job without a task: each worker's master fills in its own task, so one
  // graph file serves every worker (between-graph replication).
  std::string worker_device = "/job:worker";
  // The ops placed on ps tasks.
  std::vector<std::string> ps_ops = {"VariableV2"};
  PsStrategy strategy = PsStrategy::kRoundRobin;
};

Scope::DeviceFunction ReplicaDeviceSetter(ReplicaDeviceSetterOptions options);

// The bytes a VariableV2 node will hold (shape times dtype size); 0 when its
// shape is not fully known.
int64_t VariableBytes(const NodeDef& node);

}  // namespace tfd::train
