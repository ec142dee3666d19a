// rnn-graph: writes the GRU-on-a-while-loop training graph (the adding
// problem, examples/rnn/rnn_model.h) that `tfctl train` runs on a cluster
// (scripts/train-rnn.sh) and `tfctl run` runs in one process
// (docs/training.md, "Recurrent networks").
//
//   rnn-graph --ps-tasks 1 --steps 1000 -o rnn.capnp
//   rnn-graph --ps-tasks 0 --time-steps 20 --hidden 64 -o rnn-local.capnp
//   rnn-graph --ps-tasks 0 --time-steps 12 --min-length 7 -o rnn-varlen.capnp
#include "examples/graph_writer.h"
#include "examples/rnn/rnn_model.h"

namespace po = boost::program_options;
using namespace tfd;

int main(int argc, char** argv) {
  examples::RnnOptions o;
  examples::GraphWriter writer(
      "rnn-graph [--ps-tasks N] [--steps N] [--batch-size N] [--time-steps N] [--hidden N] "
      "[--min-length N] [--learning-rate F] [--eval-batch N] [--seed N] "
      "[--format binary|text] -o FILE");
  writer.flags().add_options()
      ("ps-tasks", po::value(&o.ps_tasks), "ps tasks the variables are spread over (0: none)")
      ("steps", po::value(&o.max_steps), "last global step (default 1000)")
      ("batch-size", po::value(&o.batch_size), "sequences per step (default 64)")
      ("time-steps", po::value(&o.time_steps), "steps of each sequence (default 12)")
      ("hidden", po::value(&o.hidden), "units of the GRU (default 32)")
      ("min-length", po::value(&o.min_length),
       "shortest sequence, above half the time steps: lengths vary, padded (default 0: all full)")
      ("learning-rate", po::value(&o.learning_rate), "Adam's learning rate (default 0.01)")
      ("eval-batch", po::value(&o.eval_batch), "held-out sequences for eval/accuracy (default 1000)")
      ("seed", po::value(&o.seed), "seed of the initial weights and of the data");
  return writer.Main(
      argc, argv, [](const po::variables_map&) { return OkStatus(); },
      [&](Scope& root) { return examples::BuildRnn(root, o); });
}
