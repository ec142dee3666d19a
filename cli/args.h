// ParseArgs: every tfctl subcommand's command line, parsed one way. A
// command declares its options once, with their descriptions, in a
// boost::program_options description, and names which of them are its
// positional arguments; ParseArgs adds --help, parses, and for --help throws
// HelpRequested carrying the arguments and options with their descriptions,
// which main prints under the command's usage line (so `tfctl CMD --help`
// and `tfctl help CMD` never drift from what CMD accepts).
//
//   po::options_description options;
//   options.add_options()
//       ("file", po::value(&file), "the graph file")
//       ("steps", po::value(&steps), "number of steps (default 1)");
//   po::positional_options_description positional;
//   positional.add("file", 1);
//   po::variables_map vm = ParseArgs(args, options, positional);
//
// A positional argument is only that: its help shows it as FILE under
// "arguments", and `--file` on the command line is an unknown option.
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

// Thrown by ParseArgs for --help / -h: what() is the help text that follows
// the usage line: the arguments, then the options.
class HelpRequested : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

boost::program_options::variables_map ParseArgs(
    const Args& args, const boost::program_options::options_description& options,
    const boost::program_options::positional_options_description& positional = {});

// The help text ParseArgs throws for --help, without throwing.
std::string HelpText(const boost::program_options::options_description& options,
                     const boost::program_options::positional_options_description& positional = {});

}  // namespace tfd::cli
