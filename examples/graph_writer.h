// GraphWriter: what the example graph writers (mnist-graph, ctr-graph,
// cifar-graph, rnn-graph) share around their own flags: --help, --format
// binary|text and -o FILE; reading the command line; the op registry and
// root scope the model is built in; writing the graph file; and how each
// way out is reported — a usage error is "error: INVALID_ARGUMENT: ..."
// with the flags' help and exit status 2, a failure to build or write is
// "error: CODE: ..." and exit status 1 (2 for INVALID_ARGUMENT).
//
//   examples::RnnOptions o;
//   GraphWriter writer("rnn-graph [--ps-tasks N] ... -o FILE");
//   writer.flags().add_options()
//       ("ps-tasks", po::value(&o.ps_tasks), "ps tasks the variables are spread over");
//   return writer.Main(argc, argv,
//                      [&](const po::variables_map&) { return OkStatus(); },  // checks
//                      [&](Scope& root) { return examples::BuildRnn(root, o); });
//
// Thread-safety: none; one per program's main.
#pragma once

#include <functional>
#include <string>

#include <boost/program_options.hpp>

#include "common/scope.h"
#include "common/status.h"

namespace tfd::examples {

class GraphWriter {
 public:
  // `usage` heads the help: the program's name and its flags in brief.
  explicit GraphWriter(const std::string& usage);

  // Where the program adds its own flags; --help, --format and -o are there.
  boost::program_options::options_description& flags() { return flags_; }

  // After the flags are read: INVALID_ARGUMENT for values the flags' types
  // do not catch (a choice, a combination), which Main reports as usage.
  using Check = std::function<Status(const boost::program_options::variables_map&)>;
  using Build = std::function<Status(Scope& root)>;

  // Reads the command line, checks it, builds and writes; the exit status.
  int Main(int argc, char** argv, const Check& check, const Build& build);

 private:
  boost::program_options::options_description flags_;
  std::string output_;
  std::string format_ = "binary";
};

}  // namespace tfd::examples
