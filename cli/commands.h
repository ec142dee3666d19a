// The tfctl subcommands, each in its own file, dispatched by cli/main.cc.
//
// A command gets the arguments after its name and returns the process exit
// code: 0 on success, 1 after printing `error: CODE: message` (see
// cli/output.h). A mistake in the command line itself (unknown subcommand,
// bad or missing flag) is thrown as UsageError — or as a
// boost::program_options::error — and main prints the command's usage line
// and exits 2.
//
//   int code = GraphCommand({"show", "g.txt"});
//
// Thread-safety: each command runs on main's thread.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "common/graph_def.h"

namespace tfd::cli {

using Args = std::vector<std::string>;

// A malformed command line; main prints what() and the usage line, exits 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The graph in `path` (binary or text form), or read from stdin for "-".
StatusOr<GraphDef> ReadGraphArg(const std::string& path);

int GraphCommand(const Args& args);  // graph show|validate|encode|decode
int RunCommand(const Args& args);    // run FILE ...
int OpsCommand(const Args& args);    // ops [--output ...]

// One-line usage of each command, for `tfctl help` and usage errors.
inline constexpr const char* kGraphUsage =
    "tfctl graph show|validate|encode|decode FILE [-o OUT] [--output human|json]";
inline constexpr const char* kRunUsage =
    "tfctl run FILE [--feed NAME=VALUE|NAME=@file.npy]... [--fetch NAME[:PORT]]... "
    "[--target NAME]... [--init NAME]... [--steps N] [--timeout S] [--trace] [--output human|json] "
    "[--io-dir DIR]... [--log-level LEVEL]";
inline constexpr const char* kOpsUsage = "tfctl ops [--output human|json|markdown]";

}  // namespace tfd::cli
