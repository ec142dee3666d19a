// tfctl: the command-line client of tfd. This file only dispatches to the
// subcommands (cli/commands.h) and turns whatever escapes them into an exit
// code: 2 with a usage line for a malformed command line, 1 with
// `error: CODE: message` for everything else — never a crash.
#include <boost/program_options/errors.hpp>
#include <kj/exception.h>

#include <iostream>
#include <string_view>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "common/heap_policy.h"
#include "tfd_version.h"

namespace {

using tfd::cli::Args;

constexpr const char* kVersion = "tfctl " TFD_VERSION;

struct Command {
  std::string_view name;
  int (*run)(const Args&);
  const char* usage;
  const char* summary;
};

constexpr Command kCommands[] = {
    {"graph", tfd::cli::GraphCommand, tfd::cli::kGraphUsage,
     "show, validate, encode (to binary) or decode (to text) a graph file"},
    {"run", tfd::cli::RunCommand, tfd::cli::kRunUsage,
     "run a graph in this process and print the fetched tensors"},
    {"ops", tfd::cli::OpsCommand, tfd::cli::kOpsUsage, "list the registered ops"},
    {"submit", tfd::cli::SubmitCommand, tfd::cli::kSubmitUsage,
     "run a graph for N steps in a session on a running task"},
    {"train", tfd::cli::TrainCommand, tfd::cli::kTrainUsage,
     "train a graph on one worker: init or wait, steps, progress, checkpoints, accuracy"},
    {"wait", tfd::cli::WaitCommand, tfd::cli::kWaitUsage,
     "wait until every task is reachable, or variables are initialized (exit 3 at the deadline)"},
    {"status", tfd::cli::StatusCommand, tfd::cli::kStatusUsage,
     "each task of a cluster: up or down, uptime, sessions, variables"},
    {"vars", tfd::cli::VarsCommand, tfd::cli::kVarsUsage, "list or read a task's variables"},
    {"start", tfd::cli::StartCommand, tfd::cli::kStartUsage,
     "start this host's tasks of a cluster as background tfd processes"},
    {"stop", tfd::cli::StopCommand, tfd::cli::kStopUsage, "stop them (SIGTERM, then SIGKILL)"},
    {"checkpoint", tfd::cli::CheckpointCommand, tfd::cli::kCheckpointUsage,
     "save, restore or list the checkpoints of every task that has a --checkpoint-dir"},
};

void PrintHelp() {
  std::cout << "tfctl: graph tools, in-process runs and cluster control for tfd\n\ncommands:\n";
  for (const Command& c : kCommands) std::cout << "  " << c.usage << "\n      " << c.summary << "\n";
  std::cout << "\n`tfctl COMMAND --help` lists a command's options. Without --target, a\n"
               "command that talks to one task talks to the one TF_CONFIG names.\n"
               "Errors print `error: CODE: message` on stderr; the exit status is 1,\n"
               "or 2 for a malformed command line. See docs/cli.md.\n";
}

int Usage(const std::string& message, const char* usage) {
  std::cout.flush();
  std::cerr << "error: INVALID_ARGUMENT: " << message << "\nusage: " << usage
            << "\n(--help lists the options)" << std::endl;
  return 2;
}

int Internal(const std::string& what) {
  return tfd::cli::ReportError(tfd::errors::Internal(what));
}

int Main(int argc, char** argv) {
  const char* general =
      "tfctl graph|run|ops|submit|train|wait|status|vars|start|stop|checkpoint ... (tfctl help for more)";
  if (argc < 2) return Usage("missing command", general);
  const std::string_view name = argv[1];
  if (name == "help" || name == "--help" || name == "-h") {
    PrintHelp();
    return 0;
  }
  if (name == "version" || name == "--version") {
    std::cout << kVersion << "\n";
    return 0;
  }
  const Command* command = nullptr;
  for (const Command& c : kCommands) {
    if (c.name == name) command = &c;
  }
  if (command == nullptr) return Usage("unknown command '" + std::string(name) + "'", general);
  const Args args(argv + 2, argv + argc);
  try {
    return command->run(args);
  } catch (const tfd::cli::HelpRequested& help) {
    std::cout << "usage: " << command->usage << "\n  " << command->summary << "\n\n"
              << help.what();
    return 0;
  } catch (const tfd::cli::UsageError& e) {
    return Usage(e.what(), command->usage);
  } catch (const boost::program_options::error& e) {
    return Usage(e.what(), command->usage);
  }
}

}  // namespace

int main(int argc, char** argv) {
  // tfctl runs steps in its own process too (run, train, a hosted task).
  tfd::KeepHeapForSteps();
  try {
    return Main(argc, argv);
  } catch (const kj::Exception& e) {
    return Internal(std::string("unexpected Cap'n Proto error: ") + e.getDescription().cStr());
  } catch (const std::exception& e) {
    return Internal(std::string("unexpected error: ") + e.what());
  } catch (...) {
    return Internal("unexpected error of an unknown kind");
  }
}
