// The CIFAR-10 training graph: a small ResNet (examples/cifar/resnet.h)
// trained with momentum SGD, between-graph replicated over the workers of a
// cluster with its variables on the ps tasks, in the form `tfctl train`
// drives (api/train_signature.h).
//
//   CifarOptions o;
//   o.workers = 2;
//   Scope root = Scope::NewRootScope(registry);
//   TFD_RETURN_IF_ERROR(BuildCifar(root, o));
//   TFD_RETURN_IF_ERROR(WriteGraphFile(root, "cifar.capnp"));
//
// The input is CifarDataset over the binary files in each daemon's
// --data-dir, each worker reading its own shard of every epoch. Batch norm's
// moving averages are variables on the ps, updated by every training step
// and read by "eval/accuracy", which classifies the test file.
#pragma once

#include <string>
#include <vector>

#include "common/scope.h"

namespace tfd::examples {

struct CifarOptions {
  int blocks = 1;  // residual blocks per stage: ResNet-(6 * blocks + 2)
  int ps_tasks = 1;
  int workers = 1;
  int64_t batch_size = 128;
  int64_t epochs = 10;  // passes over each worker's shard; training ends with the input
  double learning_rate = 0.05;
  double momentum = 0.9;
  int64_t seed = 1;
  // Inside each daemon's --data-dir.
  std::vector<std::string> train_files = {"data_batch_1.bin", "data_batch_2.bin",
                                          "data_batch_3.bin", "data_batch_4.bin",
                                          "data_batch_5.bin"};
  std::string test_file = "test_batch.bin";
  int64_t test_batch = 10000;  // test examples evaluated: the whole CIFAR-10 test set
  int64_t eval_batch = 500;    // classified at once, one chunk after the other
};

// INVALID_ARGUMENT naming the flag when `o` makes no sense.
Status CheckCifarOptions(const CifarOptions& o);

// Adds the whole training graph to `root` (a fresh root scope); the scope's
// first error is returned.
Status BuildCifar(const Scope& root, const CifarOptions& o);

}  // namespace tfd::examples
