// rnn-graph: writes the GRU-on-a-while-loop training graph (the adding
// problem, examples/rnn/rnn_model.h) that `tfctl train` runs on a cluster
// (scripts/train-rnn.sh) and `tfctl run` runs in one process
// (docs/training.md, "Recurrent networks").
//
//   rnn-graph --ps-tasks 1 --steps 1000 -o rnn.capnp
//   rnn-graph --ps-tasks 0 --time-steps 20 --hidden 64 -o rnn-local.capnp
//   rnn-graph --ps-tasks 0 --time-steps 12 --min-length 7 -o rnn-varlen.capnp
#include <boost/program_options.hpp>
#include <iostream>

#include "api/graph_file.h"
#include "examples/rnn/rnn_model.h"
#include "kernels/register_all.h"

namespace po = boost::program_options;
using namespace tfd;

int main(int argc, char** argv) {
  examples::RnnOptions o;
  std::string output, format = "binary";
  po::options_description flags(
      "rnn-graph [--ps-tasks N] [--steps N] [--batch-size N] [--time-steps N] [--hidden N] "
      "[--min-length N] [--learning-rate F] [--eval-batch N] [--seed N] "
      "[--format binary|text] -o FILE");
  flags.add_options()
      ("help,h", "this text")
      ("ps-tasks", po::value(&o.ps_tasks), "ps tasks the variables are spread over (0: none)")
      ("steps", po::value(&o.max_steps), "last global step (default 1000)")
      ("batch-size", po::value(&o.batch_size), "sequences per step (default 64)")
      ("time-steps", po::value(&o.time_steps), "steps of each sequence (default 12)")
      ("hidden", po::value(&o.hidden), "units of the GRU (default 32)")
      ("min-length", po::value(&o.min_length),
       "shortest sequence, above half the time steps: lengths vary, padded (default 0: all full)")
      ("learning-rate", po::value(&o.learning_rate), "Adam's learning rate (default 0.01)")
      ("eval-batch", po::value(&o.eval_batch), "held-out sequences for eval/accuracy (default 1000)")
      ("seed", po::value(&o.seed), "seed of the initial weights and of the data")
      ("format", po::value(&format), "binary or text")
      ("output,o", po::value(&output), "graph file to write");
  try {
    po::variables_map vm;
    po::store(po::parse_command_line(argc, argv, flags), vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::cout << flags;
      return 0;
    }
    if (output.empty()) throw po::error("-o FILE is required");
    if (format != "binary" && format != "text") {
      throw po::error("--format must be binary or text, not '" + format + "'");
    }
  } catch (const po::error& e) {
    std::cerr << "error: " << e.what() << "\n" << flags;
    return 2;
  }
  OpRegistry registry;
  Status s = kernels::RegisterAll(registry);
  Scope root = Scope::NewRootScope(registry);
  if (s.ok()) s = examples::BuildRnn(root, o);
  if (s.ok()) {
    s = WriteGraphFile(root, output, format == "text" ? GraphFormat::kText : GraphFormat::kBinary);
  }
  if (!s.ok()) {
    std::cerr << "error: " << s.ToString() << "\n";
    return s.code() == Code::kInvalidArgument ? 2 : 1;
  }
  return 0;
}
