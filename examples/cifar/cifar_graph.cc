// cifar-graph: writes the CIFAR-10 ResNet training graph that `tfctl train`
// runs on every worker of a cluster (docs/training.md, "CIFAR-10 and a ResNet").
//
//   cifar-graph --workers 2 -o cifar.capnp                  # ResNet-8, the five data_batch files
//   cifar-graph --blocks 3 --epochs 30 -o resnet20.capnp    # ResNet-20
#include <boost/algorithm/string/classification.hpp>
#include <boost/algorithm/string/split.hpp>

#include "examples/graph_writer.h"
#include "examples/cifar/cifar_model.h"

namespace po = boost::program_options;
using namespace tfd;

int main(int argc, char** argv) {
  examples::CifarOptions o;
  std::string train_files;
  examples::GraphWriter writer(
      "cifar-graph [--blocks N] [--workers N] [--ps-tasks N] [--epochs N] [--batch-size N] "
      "[--learning-rate F] [--momentum F] [--seed N] [--train-files A,B,...] [--test-file F] "
      "[--test-batch N] [--eval-batch N] -o FILE");
  writer.flags().add_options()
      ("blocks", po::value(&o.blocks), "residual blocks per stage: ResNet-(6N+2); 1 (ResNet-8) by "
       "default, 3 for ResNet-20")
      ("workers", po::value(&o.workers), "worker replicas; each reads its own shard")
      ("ps-tasks", po::value(&o.ps_tasks), "ps tasks the parameters are spread over")
      ("epochs", po::value(&o.epochs), "passes over each worker's shard (default 10)")
      ("batch-size", po::value(&o.batch_size), "examples per step (default 128)")
      ("learning-rate", po::value(&o.learning_rate), "momentum SGD's learning rate (default 0.05)")
      ("momentum", po::value(&o.momentum), "momentum SGD's momentum (default 0.9)")
      ("seed", po::value(&o.seed), "seed of the initial weights and of the shuffling")
      ("train-files", po::value(&train_files),
       "comma-separated training files inside the daemons' --data-dir (default "
       "data_batch_1.bin,...,data_batch_5.bin)")
      ("test-file", po::value(&o.test_file), "the test file (default test_batch.bin)")
      ("test-batch", po::value(&o.test_batch), "test examples evaluated (default 10000)")
      ("eval-batch", po::value(&o.eval_batch), "test examples classified at once (default 500)");
  return writer.Main(
      argc, argv,
      [&](const po::variables_map&) {
        if (!train_files.empty()) {
          o.train_files.clear();
          boost::split(o.train_files, train_files, boost::is_any_of(","));
        }
        return OkStatus();
      },
      [&](Scope& root) { return examples::BuildCifar(root, o); });
}
