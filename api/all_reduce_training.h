// Synchronous data-parallel training without a ps, as Horovod's
// DistributedOptimizer and TF's CollectiveAllReduceStrategy: every worker
// holds a replica of every variable on its own task, computes the gradients
// of its own batch, and replaces each by the group's mean (one
// CollectiveReduce per variable: Add, then Div by the group's size) before
// the wrapped optimizer applies it. Every replica applies the same mean to
// the same values, so the replicas stay equal step after step.
//
// Each worker runs the same graph in its own session; a node without a
// task in its device runs on the worker whose session runs it, and the
// collectives of that worker take its task index as their rank. The
// variables must therefore be placed on "/job:worker" (or left unplaced),
// never on a ps, and must start equal: give random initializers a nonzero
// seed (a seeded initializer draws the same values on every task), or
// restore every replica from one checkpoint.
//
//   train::AllReduceOptions group{.group_size = 4};
//   train::GradientDescent sgd(0.1);
//   Operation train = train::AllReduceMinimize(root.WithOpName("train"), sgd, loss, group);
//
// A sparse gradient (an embedding read through gathers) is densified before
// its all-reduce: each step then moves the whole table, which is what a ps
// exists to avoid. The instance keys are first_instance_key, +1, ... in the
// order of the variables, so two all-reduced optimizers in one graph need
// distinct ranges (or group keys).
//
// Thread-safety: as Scope.
#pragma once

#include <vector>

#include "api/optimizers.h"

namespace tfd::train {

struct AllReduceOptions {
  int group_size = 1;  // workers 0..group_size-1 of the job, each one replica
  int group_key = 1;
  int first_instance_key = 1;
};

// `grads_and_vars` with every gradient replaced by its mean over the group,
// each all-reduce colocated with its variable. Errors go to the scope.
std::vector<GradAndVar> AllReduceGradients(const Scope& scope,
                                           const std::vector<GradAndVar>& grads_and_vars,
                                           const AllReduceOptions& options);

// optimizer.ComputeGradients, AllReduceGradients, optimizer.ApplyGradients:
// the train op of one replica (global_step, when valid, is each replica's
// own count of the updates it applied).
Operation AllReduceMinimize(const Scope& scope, const Optimizer& optimizer, const Output& loss,
                            const AllReduceOptions& options, const Variable& global_step = {},
                            std::vector<Variable> var_list = {});

}  // namespace tfd::train
