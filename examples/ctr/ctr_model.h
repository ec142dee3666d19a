// A wide & deep click-through-rate model over Criteo TSV data, built with
// the C++ graph API as one between-graph file (every worker gets the same
// graph; its master fills in its own task), in the shape of the peer
// benchmark's `ctr` model (../shared/peers/README.md) so that the two train
// like with like:
//
//  - one embedding table [vocab, 16] shared by the 26 categorical fields, and
//    a wide table [vocab, 1]; a category's row is the reader's hash
//    (kernels/data/criteo_line.h), an empty field contributes nothing (the
//    peer's empty bag);
//  - deep part: the 26 embeddings and log(1 + max(I_j, 0)) of the 13 integer
//    features (429 values) through an MLP 429-256-128-1 with ReLU; the logit
//    is the MLP's output plus the sum of the wide rows;
//  - binary cross-entropy on the logit, batch 512.
//
// Both tables are PartitionedVariables with one shard per ps task, read by
// ops::EmbeddingLookup ("div": a row stays on its shard's rows across
// checkpoint resharding), so only a batch's distinct rows travel and their
// gradients are sparse; the MLP lives on the ps tasks too
// (ReplicaDeviceSetter, greedy by bytes). Training (asynchronous) is
// Adagrad on the touched table rows and Adam on the MLP, as the peer.
//
//   CtrOptions o;
//   o.ps_tasks = 2;
//   o.train_files = {"ctr-train.tsv"};
//   o.eval_file = "ctr-eval.tsv";
//   o.eval_examples = 32768;
//   Scope root = Scope::NewRootScope(registry);
//   TFD_RETURN_IF_ERROR(BuildCtr(root, o));
//
// The graph follows api/train_signature.h; "eval/auc" is the AUC of the
// logits over the first eval_examples examples of eval_file, with the
// current parameters.
#pragma once

#include <string>
#include <vector>

#include "common/scope.h"

namespace tfd::examples {

struct CtrOptions {
  int ps_tasks = 1;
  // Worker replicas; each reads every workers-th line of the training files.
  int workers = 1;
  // Synchronous replicas: each update averages replicas_to_aggregate
  // gradients (0: every worker's).
  bool sync = false;
  int replicas_to_aggregate = 0;
  int64_t vocab = 1 << 20;  // rows of both tables (the reader's num_buckets)
  // Shards of each table, spread over the ps tasks; 0: one per ps task.
  // More shards than ps tasks keep each shard's initialization (its random
  // values and their scaled copy, both as large as the shard) and each
  // update's working set small beside a ps's memory budget.
  int table_shards = 0;
  int64_t embedding_dim = 16;
  int64_t batch_size = 512;
  // Passes over each worker's shard (asynchronous training ends with its
  // input); train/max_steps when > 0 (required with sync).
  int64_t epochs = 1;
  int64_t max_steps = 0;
  // Asynchronous training: Adam at learning_rate on the MLP, Adagrad at
  // sparse_learning_rate on the table rows a batch touches (the peer's
  // recipe). Synchronous replicas: Adam at learning_rate on everything.
  double learning_rate = 0.001;
  double sparse_learning_rate = 0.03;
  int64_t seed = 1;
  // Inside each daemon's --data-dir.
  std::vector<std::string> train_files = {"ctr-train.tsv"};
  std::string eval_file = "ctr-eval.tsv";
  int64_t eval_examples = 32768;  // the held-out set, in one batch
};

// INVALID_ARGUMENT naming the option when `o` makes no sense.
Status CheckCtrOptions(const CtrOptions& o);

// Adds the whole training graph to `root` (a fresh root scope); the
// scope's first error is returned.
Status BuildCtr(const Scope& root, const CtrOptions& o);

}  // namespace tfd::examples
