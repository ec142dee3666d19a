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

// Every command, the one place that gives its usage line and summary:
// `tfctl help` lists them, `tfctl help CMD` and `tfctl CMD --help` print
// CMD's with its arguments and options (cli/args.h), a usage error repeats
// its usage line. Positional arguments are written as they are typed (FILE),
// the rest as [options].
struct Command {
  std::string_view name;
  int (*run)(const Args&);
  const char* usage;
  const char* summary;
};

constexpr Command kCommands[] = {
    {"graph", tfd::cli::GraphCommand, "tfctl graph show|validate|encode|decode FILE [options]",
     "show, validate, encode (to binary) or decode (to text) a graph file"},
    {"run", tfd::cli::RunCommand, "tfctl run FILE [options]",
     "run a graph in this process and print the fetched tensors"},
    {"ops", tfd::cli::OpsCommand, "tfctl ops [options]", "list the registered ops"},
    {"submit", tfd::cli::SubmitCommand, "tfctl submit FILE [--target HOST:PORT] [options]",
     "run a graph for N steps in a session on a running task"},
    {"train", tfd::cli::TrainCommand,
     "tfctl train FILE [--target HOST:PORT] [options] [-- TFD_FLAGS (host the task here)]",
     "train a graph on one worker: init or wait, steps, progress, checkpoints, accuracy"},
    {"wait", tfd::cli::WaitCommand, "tfctl wait cluster|init [--target HOST:PORT] [options]",
     "wait until every task is reachable, or variables are initialized (exit 3 at the deadline)"},
    {"status", tfd::cli::StatusCommand, "tfctl status --cluster SPEC [options]",
     "each task of a cluster: up or down, uptime, sessions, variables"},
    {"health", tfd::cli::HealthCommand, "tfctl health [--target HOST:PORT | --self] [options]",
     "whether one task is up and serving: exit 0 if so, 1 with the reason if not (a probe)"},
    {"vars", tfd::cli::VarsCommand, "tfctl vars list|get NAME [--target HOST:PORT] [options]",
     "list or read a task's variables"},
    {"start", tfd::cli::StartCommand, "tfctl start --cluster SPEC [options]",
     "start this host's tasks of a cluster as background tfd processes"},
    {"stop", tfd::cli::StopCommand, "tfctl stop --cluster SPEC [options]",
     "stop them (SIGTERM, then SIGKILL)"},
    {"checkpoint", tfd::cli::CheckpointCommand,
     "tfctl checkpoint save|restore|list [--target HOST:PORT] [options]",
     "save, restore or list the checkpoints of every task that has a --checkpoint-dir"},
};

// `tfctl version` (and `tfctl --version`): prints the version. Like every
// command it refuses arguments and flags it does not have (exit 2), and
// --help prints its help.
int VersionCommand(const Args& args) {
  tfd::cli::ParseArgs(args, boost::program_options::options_description("version"));
  std::cout << kVersion << "\n";
  return 0;
}

// Not in kCommands, which `tfctl help` lists as the commands (and the bash
// completion reads); the general help names it on a line of its own.
constexpr Command kVersionCommand = {"version", VersionCommand, "tfctl version",
                                     "print tfctl's version (meson.build's, as tfd --version)"};

// "graph|run|ops|...", from the table.
std::string CommandNames() {
  std::string names;
  for (const Command& c : kCommands) names += (names.empty() ? "" : "|") + std::string(c.name);
  return names;
}

const Command* FindCommand(std::string_view name) {
  for (const Command& c : kCommands) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

void PrintHelp() {
  std::cout << "tfctl: graph tools, in-process runs and cluster control for tfd\n\ncommands:\n";
  for (const Command& c : kCommands) std::cout << "  " << c.usage << "\n      " << c.summary << "\n";
  std::cout << "\n`tfctl help COMMAND` or `tfctl COMMAND --help` prints a command's arguments\n"
               "and options; `tfctl version` the version.\n"
               "Without --target, a command that talks to one task talks to the one\n"
               "TF_CONFIG names. Errors print `error: CODE: message` on stderr; the exit\n"
               "status is 1, or 2 for a malformed command line. See docs/cli.md.\n";
}

// A malformed command line: exit 2, the error and the usage line on
// stderr; with `json`, also the error object every JSON command prints on
// stdout, with the usage line in it.
int Usage(const std::string& message, const std::string& usage, bool json = false) {
  std::cout.flush();
  std::cerr << "error: INVALID_ARGUMENT: " << message << "\nusage: " << usage
            << "\n(tfctl help lists the commands, tfctl help COMMAND a command's options)"
            << std::endl;
  if (json) {
    std::cout << tfd::cli::DumpJson(
                     {{"error",
                       {{"code", "INVALID_ARGUMENT"}, {"message", message}, {"usage", usage}}}})
              << std::endl;
  }
  return 2;
}

// Whether a command line asks for JSON output (`--output json` or
// `--output=json`, before any `--`), for its usage errors: a script that
// reads stdout then learns why it got no result, as for any other error.
bool AsksForJson(const Args& args) {
  for (size_t i = 0; i < args.size() && args[i] != "--"; ++i) {
    if (args[i] == "--output=json") return true;
    if (args[i] == "--output" && i + 1 < args.size() && args[i + 1] == "json") return true;
  }
  return false;
}

std::string GeneralUsage() { return "tfctl " + CommandNames() + "|help|version ..."; }

int Internal(const std::string& what) {
  return tfd::cli::ReportError(tfd::errors::Internal(what));
}

// Runs `command`; its --help and its usage errors are printed here, so
// `tfctl help CMD` (which runs CMD with --help) prints what `tfctl CMD
// --help` does.
int Run(const Command& command, const Args& args) {
  try {
    return command.run(args);
  } catch (const tfd::cli::HelpRequested& help) {
    std::cout << "usage: " << command.usage << "\n  " << command.summary << "\n\n"
              << help.what();
    return 0;
  } catch (const tfd::cli::UsageError& e) {
    return Usage(e.what(), command.usage, AsksForJson(args));
  } catch (const boost::program_options::error& e) {
    return Usage(e.what(), command.usage, AsksForJson(args));
  }
}

// `tfctl help [COMMAND]`.
int Help(const Args& args) {
  if (args.size() > 1) {
    return Usage("help takes one command, got " + std::to_string(args.size()) + " words",
                 "tfctl help [COMMAND]");
  }
  if (args.empty() || args[0] == "help") {
    PrintHelp();
    return 0;
  }
  if (args[0] == kVersionCommand.name) return Run(kVersionCommand, {"--help"});
  const Command* command = FindCommand(args[0]);
  if (command == nullptr) {
    return Usage("unknown command '" + args[0] + "' (expected " + CommandNames() + ")",
                 "tfctl help [COMMAND]");
  }
  return Run(*command, {"--help"});
}

int Main(int argc, char** argv) {
  if (argc < 2) return Usage("missing command", GeneralUsage());
  const std::string_view name = argv[1];
  const Args args(argv + 2, argv + argc);
  if (name == "help" || name == "--help" || name == "-h") return Help(args);
  if (name == "version" || name == "--version") return Run(kVersionCommand, args);
  const Command* command = FindCommand(name);
  if (command == nullptr) {
    return Usage("unknown command '" + std::string(name) + "' (expected " + CommandNames() + ")",
                 GeneralUsage());
  }
  return Run(*command, args);
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
