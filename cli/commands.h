// The tfctl subcommands, each in its own file, dispatched by cli/main.cc.
//
// A command gets the arguments after its name and returns the process exit
// code: 0 on success, 1 after printing `error: CODE: message` (see
// cli/output.h). A mistake in the command line itself (unknown subcommand,
// bad or missing flag) is thrown as UsageError — or as a
// boost::program_options::error — and main prints the command's synopsis
// and exits 2. Commands parse their flags with ParseArgs (cli/args.h),
// which also answers --help. Each command's usage line and summary are in
// main's table of commands, the one place that lists them.
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
int SubmitCommand(const Args& args);  // submit FILE --target HOST:PORT ...
int TrainCommand(const Args& args);   // train FILE --target HOST:PORT ...
int WaitCommand(const Args& args);    // wait cluster|init --target HOST:PORT
int StatusCommand(const Args& args);  // status --cluster SPEC
int VarsCommand(const Args& args);    // vars list|get NAME --target HOST:PORT
int StartCommand(const Args& args);   // start --cluster SPEC [--job J] [--task N]
int StopCommand(const Args& args);    // stop --cluster SPEC [--job J] [--task N]
int CheckpointCommand(const Args& args);  // checkpoint save|restore|list --target HOST:PORT
int HealthCommand(const Args& args);  // health [--target HOST:PORT | --self]

}  // namespace tfd::cli
