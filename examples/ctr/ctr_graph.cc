// ctr-graph: writes the wide & deep CTR training graph that `tfctl train`
// runs on every worker of a cluster (scripts/train-ctr.sh; docs/training.md).
//
//   ctr-graph --ps-tasks 2 --workers 2 --train ctr-train.tsv --eval ctr-eval.tsv -o ctr.capnp
//   ctr-graph --ps-tasks 2 --workers 2 --sync --steps 2000 -o ctr-sync.capnp

#include "examples/graph_writer.h"
#include "examples/ctr/ctr_model.h"

namespace po = boost::program_options;
using namespace tfd;

int main(int argc, char** argv) {
  examples::CtrOptions o;
  std::vector<std::string> train;
  examples::GraphWriter writer(
      "ctr-graph [--ps-tasks N] [--workers N] [--sync --steps N] [--vocab V] [--batch-size N] "
      "[--epochs N] [--learning-rate F] [--sparse-learning-rate F] [--train FILE]... [--eval FILE] [--eval-examples N] "
      "-o FILE");
  writer.flags().add_options()
      ("ps-tasks", po::value(&o.ps_tasks), "ps tasks the tables and the MLP are spread over")
      ("workers", po::value(&o.workers), "worker replicas; each reads its own lines")
      ("sync", po::bool_switch(&o.sync), "synchronous replicas (default: asynchronous)")
      ("replicas-to-aggregate", po::value(&o.replicas_to_aggregate),
       "sync: gradients per update (default: every worker's)")
      ("steps", po::value(&o.max_steps), "last global step (required with --sync)")
      ("vocab", po::value(&o.vocab), "rows of the embedding and wide tables (default 2^20)")
      ("table-shards", po::value(&o.table_shards),
       "shards of each table over the ps tasks (default: one per ps task)")
      ("embedding-dim", po::value(&o.embedding_dim), "embedding width (default 16)")
      ("batch-size", po::value(&o.batch_size), "examples per step (default 512)")
      ("epochs", po::value(&o.epochs), "passes over each worker's lines (default 1)")
      ("learning-rate", po::value(&o.learning_rate),
       "Adam's learning rate on the MLP (default 0.001)")
      ("sparse-learning-rate", po::value(&o.sparse_learning_rate),
       "Adagrad's learning rate on the table rows (default 0.03; --sync: Adam on all)")
      ("seed", po::value(&o.seed), "seed of the initial weights")
      ("train", po::value(&train), "training TSV file in --data-dir (repeatable; in order)")
      ("eval", po::value(&o.eval_file), "held-out TSV file in --data-dir")
      ("eval-examples", po::value(&o.eval_examples),
       "held-out examples evaluated in one batch: the eval file's line count (default 32768)");
  return writer.Main(
      argc, argv,
      [&](const po::variables_map&) {
        if (!train.empty()) o.train_files = train;
        return OkStatus();
      },
      [&](Scope& root) { return examples::BuildCtr(root, o); });
}
