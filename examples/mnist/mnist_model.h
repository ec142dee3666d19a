// The MNIST models of the classic distributed-TensorFlow walkthrough, built
// with the C++ graph API as one between-graph file: the same graph is
// submitted to every worker, whose master fills in its own task.
//
//   MnistOptions o;                       // the classic model, asynchronous
//   o.workers = 2;
//   Scope root = Scope::NewRootScope(registry);
//   TFD_RETURN_IF_ERROR(BuildMnist(root, o));
//   TFD_RETURN_IF_ERROR(WriteGraphFile(root, "mnist.capnp"));
//
// The graph follows api/train_signature.h, so `tfctl train` drives it:
// variables (and global_step) on the ps tasks, the input pipeline, the
// forward and backward passes on the worker; "eval/accuracy" classifies the
// whole test set with the current parameters.
//
// Models:
//  - classic: 784-100-10 with a sigmoid hidden layer, weights drawn from
//    N(0, 1) with seed 1 (biases zero), softmax cross-entropy, plain SGD at
//    0.001 and batches of 100: the walkthrough's network.
//  - strong: 784-256-10 with ReLU, He-scaled truncated-normal weights and
//    Adam at 0.001 — what the same data gives with a modern recipe.
//  - large: 784-2048-2048-10 with ReLU (about 5.8 M parameters, 23 MB),
//    He-scaled truncated-normal weights and plain SGD: the size where moving
//    parameters and gradients is a large share of a step; spread it over
//    --ps-tasks 2. ../shared/peers measures torch's RPC parameter server
//    with the same layers (ps_big; sigmoid there, which costs the same).
//  - deep: the convnet of TensorFlow's "Deep MNIST" tutorial (two 5x5
//    convolutions with max pooling, a fully connected layer of 1024 with
//    dropout, 3.3 M parameters; examples/mnist/convnet.h), Adam at 1e-4 and
//    batches of 50. The test set is classified 1000 images at a time, so
//    the evaluation's activations stay small.
#pragma once

#include <string>

#include "common/scope.h"

namespace tfd::examples {

enum class MnistModel { kClassic, kStrong, kLarge, kDeep };

// "classic", "strong", "large" or "deep"; INVALID_ARGUMENT naming the choices otherwise.
StatusOr<MnistModel> ParseMnistModel(const std::string& name);

struct MnistOptions {
  MnistModel model = MnistModel::kClassic;
  // Where each worker computes: its CPU, or its first GPU ("gpu": the model,
  // its gradients and, without ps tasks, the variables and their updates on
  // /device:GPU:0; the input pipeline stays on the CPU). Ops without a GPU
  // kernel need the daemon's --allow-soft-placement.
  bool gpu = false;
  int ps_tasks = 1;
  // Worker replicas; with `shard`, each reads its own 1/workers of every
  // epoch, else each reads the whole training set (as the classic
  // walkthrough did, so N workers make N times the updates).
  int workers = 1;
  bool shard = true;
  // Synchronous replicas: each update averages replicas_to_aggregate
  // gradients (0: every worker's); the workers beyond it are backups.
  bool sync = false;
  int replicas_to_aggregate = 0;
  int64_t batch_size = 0;  // 0: the model's own (50 for deep, 100 for the others)
  // The training input drawn and made ahead of each step (IdxNextBatch's
  // prefetch); off only to measure what it saves.
  bool prefetch = true;
  // Passes over each worker's shard. Asynchronous training ends when the
  // input does; synchronous training ends at the global step that covers
  // them (train/max_steps).
  int64_t epochs = 20;
  double learning_rate = 0;  // 0: the model's own (1e-4 for deep, 0.001 for the others)
  int64_t seed = 1;
  int64_t train_examples = 60000;  // to size train/max_steps in sync mode
  // Inside each daemon's --data-dir.
  std::string train_images = "train-images-idx3-ubyte";
  std::string train_labels = "train-labels-idx1-ubyte";
  std::string test_images = "t10k-images-idx3-ubyte";
  std::string test_labels = "t10k-labels-idx1-ubyte";
  int64_t test_batch = 10000;  // test examples evaluated: the whole MNIST test set
  // Test examples classified at once (one chunk after the other, so that
  // only one chunk's activations are alive); 0: the model's own (1000 for
  // deep, all of test_batch for the others).
  int64_t eval_batch = 0;
};

// `o` with every "0: the model's own" option filled in.
MnistOptions WithModelDefaults(MnistOptions o);

// INVALID_ARGUMENT naming the option when `o` makes no sense.
Status CheckMnistOptions(const MnistOptions& o);

// Adds the whole training graph to `root` (which must be a fresh root
// scope); the scope's first error is returned.
Status BuildMnist(const Scope& root, const MnistOptions& o);

}  // namespace tfd::examples
