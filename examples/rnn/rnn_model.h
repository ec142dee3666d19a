// A recurrent network on a while loop, as TensorFlow 1.x's dynamic_rnn
// builds one: a GRU cell run by ops::WhileLoop over the time steps of
// inputs [batch, time, features], reading step t with a Gather on the
// time-major inputs, trained through the loop's gradient
// (kernels/control/while_grad.h) on the adding problem (Hochreiter &
// Schmidhuber 1997): each sequence has `time_steps` steps of two features,
// a value drawn from U[0, 1) and a marker that is 1 at exactly two steps
// (one in each half) and 0 elsewhere; the target is the sum of the two
// marked values. Predicting the mean (1.0) leaves a mean squared error of
// 1/6; going below it needs the cell to remember what it saw. With
// min_length, sequences vary in length and the GRU skips their padding
// (DynamicGru's sequence_length, through a cond in the loop's body).
//
// The graph makes its own data: every step draws a fresh batch from seeded
// random ops, so there is no input to read and training ends at
// train/max_steps. It follows api/train_signature.h, one between-graph file
// for every worker (variables on the ps tasks, the loop on the worker), and
// runs in one process as well (`tfctl run` puts every node there):
//
//   RnnOptions o;
//   o.ps_tasks = 1;
//   Scope root = Scope::NewRootScope(registry);
//   TFD_RETURN_IF_ERROR(BuildRnn(root, o));
//   TFD_RETURN_IF_ERROR(WriteGraphFile(root, "rnn.capnp"));
//
// "loss" (and "summaries/loss") is the batch's mean squared error;
// "eval/accuracy" the fraction of eval_batch held-out sequences (their own
// seed) whose prediction is within 0.04 of the target, the problem's usual
// criterion of success.
#pragma once

#include <cstdint>
#include <vector>

#include "common/scope.h"

namespace tfd::examples {

struct RnnOptions {
  int ps_tasks = 1;  // 0: the variables stay with the worker
  int64_t batch_size = 64;
  int64_t time_steps = 12;  // steps of each sequence: the loop's trip count
  int64_t hidden = 32;      // units of the GRU
  // 0: every sequence has time_steps steps; else each has from min_length
  // (above time_steps / 2) to time_steps, the rest padding (DynamicGru's
  // sequence_length).
  int64_t min_length = 0;
  double learning_rate = 0.01;  // Adam's
  int64_t max_steps = 1000;     // train/max_steps
  int64_t eval_batch = 1000;
  int64_t seed = 1;  // of the initial weights and of the data
};

// One step of a GRU from state h [batch, hidden] and input x [batch,
// features]: z = sigmoid(x Wz + h Uz + bz), r likewise, n = tanh(x Wn +
// (r * h) Un + bn), h' = z * h + (1 - z) * n (TF1's GRUCell, the reset gate
// applied before its matrix). `weights`: Wz, Uz, bz, Wr, Ur, br, Wn, Un, bn.
Output GruCell(const Scope& scope, const std::vector<Output>& weights, const Output& x,
               const Output& h);

// The GRU over every step of `inputs` [batch, time, features] from a zero
// state, as dynamic_rnn builds it: a while loop over t that reads step t of
// the time-major inputs with a Gather. Returns the last state [batch,
// hidden]; the time steps and the batch are read at run time. With
// `sequence_length` ([batch] int32, as dynamic_rnn's), sequence i's state
// is the one after its step sequence_length[i] - 1: the later steps copy it
// through, and the steps past the longest sequence skip the cell, through
// a cond in the loop's body (differentiated with the loop).
Output DynamicGru(const Scope& scope, const std::vector<Output>& weights, const Output& inputs,
                  const Output& sequence_length = Output());

// INVALID_ARGUMENT naming the option when `o` makes no sense.
Status CheckRnnOptions(const RnnOptions& o);

// Adds the whole training graph to `root` (a fresh root scope); the
// scope's first error is returned.
Status BuildRnn(const Scope& root, const RnnOptions& o);

}  // namespace tfd::examples
