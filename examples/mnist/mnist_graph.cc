// mnist-graph: writes the MNIST training graph that `tfctl train` runs on
// every worker of a cluster (see examples/mnist/README.md).
//
//   mnist-graph --model classic --workers 2 -o mnist.capnp
//   mnist-graph --model strong --workers 2 --sync -o mnist-sync.capnp
//   mnist-graph --model deep --workers 2 --epochs 3 -o deep.capnp

#include "examples/graph_writer.h"
#include "examples/mnist/mnist_model.h"

namespace po = boost::program_options;
using namespace tfd;

int main(int argc, char** argv) {
  examples::MnistOptions o;
  std::string model = "classic", device = "cpu";
  examples::GraphWriter writer(
      "mnist-graph [--model classic|strong|large|deep] [--workers N] [--ps-tasks N] [--sync] "
      "[--replicas-to-aggregate N] [--no-shard] [--epochs N] [--batch-size N] [--learning-rate F] "
      "[--seed N] [--device cpu|gpu] -o FILE");
  writer.flags().add_options()
      ("model", po::value(&model), "classic (784-100-10 sigmoid, SGD), strong (784-256-10 ReLU, Adam) or large "
       "(784-2048-2048-10 ReLU, SGD; 5.8 M parameters) or deep (the Deep MNIST convnet, Adam 1e-4, "
       "batch 50; 3.3 M parameters)")
      ("device", po::value(&device), "cpu, or gpu: each worker computes on its first GPU (run "
       "tfd with --allow-soft-placement for the ops without a GPU kernel)")
      ("workers", po::value(&o.workers), "worker replicas; each reads its own shard")
      ("no-shard", "every worker reads the whole training set (the classic walkthrough)")
      ("ps-tasks", po::value(&o.ps_tasks), "ps tasks the parameters are spread over")
      ("sync", po::bool_switch(&o.sync), "synchronous replicas (default: asynchronous)")
      ("replicas-to-aggregate", po::value(&o.replicas_to_aggregate),
       "sync: gradients per update (default: every worker; fewer leaves backups)")
      ("epochs", po::value(&o.epochs), "passes over each worker's shard")
      ("batch-size", po::value(&o.batch_size), "examples per step (default: 50 for deep, 100 for the others)")
      ("learning-rate", po::value(&o.learning_rate),
       "the optimizer's learning rate (default: 1e-4 for deep, 0.001 for the others)")
      ("seed", po::value(&o.seed), "seed of the initial weights and of the shuffling")
      ("train-examples", po::value(&o.train_examples), "sync: training set size, for max_steps")
      ("test-batch", po::value(&o.test_batch), "test examples evaluated (default 10000)")
      ("eval-batch", po::value(&o.eval_batch),
       "test examples classified at once (default: 1000 for deep, all for the others)");
  return writer.Main(
      argc, argv,
      [&](const po::variables_map& vm) {
        o.shard = vm.count("no-shard") == 0;
        auto parsed = examples::ParseMnistModel(model);
        if (!parsed.ok()) return parsed.status().WithContext("--model");
        o.model = *parsed;
        if (device != "cpu" && device != "gpu") {
          return errors::InvalidArgument("--device must be cpu or gpu, not '", device, "'");
        }
        o.gpu = device == "gpu";
        return OkStatus();
      },
      [&](Scope& root) { return examples::BuildMnist(root, o); });
}
