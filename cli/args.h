// ParseArgs: every tfctl subcommand's command line, parsed one way. A
// command declares its options once, with their descriptions, in a
// boost::program_options description; ParseArgs adds --help, parses, and
// for --help throws HelpRequested carrying those descriptions, which main
// prints (so `tfctl CMD --help` never drifts from what CMD accepts).
//
//   po::options_description options("submit");
//   options.add_options()("steps", po::value(&steps), "number of steps (default 1)");
//   po::positional_options_description positional;
//   positional.add("file", 1);
//   po::variables_map vm = ParseArgs(args, options, positional);
//
// A malformed command line throws boost::program_options::error (main
// prints it with the command's synopsis and exits 2).
//
// Thread-safety: pure.
#pragma once

#include <boost/program_options.hpp>
#include <stdexcept>
#include <string>

#include "cli/commands.h"

namespace tfd::cli {

// Thrown by ParseArgs for --help / -h: what() is the options' help text.
class HelpRequested : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

boost::program_options::variables_map ParseArgs(
    const Args& args, const boost::program_options::options_description& options,
    const boost::program_options::positional_options_description& positional = {});

}  // namespace tfd::cli
