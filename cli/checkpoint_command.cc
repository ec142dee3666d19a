// tfctl checkpoint save|restore|list: the cluster's checkpoints, through the
// master of the task given by --target, which asks every task
// (daemon/distributed/checkpoint_fanout.h). docs/cli.md shows the output.
#include <kj/async-io.h>

#include <boost/program_options.hpp>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <optional>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "cli/connection_flags.h"

namespace tfd::cli {
namespace {
namespace po = boost::program_options;

std::string Bytes(uint64_t n) {
  char buf[32];
  if (n < 1024) {
    std::snprintf(buf, sizeof(buf), "%llu B", static_cast<unsigned long long>(n));
  } else if (n < (uint64_t{1} << 20)) {
    std::snprintf(buf, sizeof(buf), "%.1f KiB", static_cast<double>(n) / 1024);
  } else {
    std::snprintf(buf, sizeof(buf), "%.1f MiB", static_cast<double>(n) / (1 << 20));
  }
  return buf;
}

// Local time, to the second: what a person compares with `ls -l`.
std::string Time(int64_t unix_ms) {
  const std::time_t t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

Json InfoJson(const CheckpointInfo& c) {
  Json j{{"step", c.step},       {"path", c.path},         {"bytes", c.bytes},
         {"mtime_unix_ms", c.mtime_unix_ms}, {"verified", c.verified}, {"variables", c.variables}};
  if (!c.problem.empty()) j["problem"] = c.problem;
  return j;
}

Json ReportsJson(const std::string& action, const std::vector<TaskCheckpoints>& tasks) {
  Json list = Json::array();
  for (const TaskCheckpoints& t : tasks) {
    Json checkpoints = Json::array();
    for (const CheckpointInfo& c : t.checkpoints) checkpoints.push_back(InfoJson(c));
    Json j{{"task", t.task}, {"directory", t.directory}, {"skipped", t.directory.empty() && t.left_out.empty()},
           {"checkpoints", checkpoints}};
    if (!t.left_out.empty()) j["left_out"] = t.left_out;
    if (action == "restore") {
      j["variables"] = t.variables;
      j["passed_over"] = t.skipped;
    }
    list.push_back(j);
  }
  return Json{{"action", action}, {"tasks", list}};
}

// The step every task saved or restored (they agree by construction).
std::optional<int64_t> StepOf(const std::vector<TaskCheckpoints>& tasks) {
  for (const TaskCheckpoints& t : tasks) {
    if (!t.checkpoints.empty()) return t.checkpoints.front().step;
  }
  return std::nullopt;
}

void PrintSavedOrRestored(const std::string& action, const std::vector<TaskCheckpoints>& tasks) {
  const auto step = StepOf(tasks);
  std::printf("%s step %lld\n", action == "save" ? "saved" : "restored",
              static_cast<long long>(step.value_or(-1)));
  for (const TaskCheckpoints& t : tasks) {
    if (!t.left_out.empty()) {
      std::printf("  %-32s left out: %s\n", t.task.c_str(), t.left_out.c_str());
      continue;
    }
    if (t.directory.empty()) {
      std::printf("  %-32s skipped: no checkpoint directory\n", t.task.c_str());
      continue;
    }
    for (const CheckpointInfo& c : t.checkpoints) {
      std::printf("  %-32s %s (%u variables, %s)\n", t.task.c_str(), c.path.c_str(), c.variables,
                  Bytes(c.bytes).c_str());
    }
    // Passing over a newer checkpoint is worth a person's attention, not a
    // script's stdout.
    for (const std::string& s : t.skipped) {
      std::fprintf(stderr, "warning: %s: passed over %s\n", t.task.c_str(), s.c_str());
    }
  }
}

void PrintList(const std::vector<TaskCheckpoints>& tasks) {
  std::printf("%-32s %8s %10s %-19s %-8s %s\n", "TASK", "STEP", "SIZE", "WRITTEN", "VERIFIED",
              "PATH");
  for (const TaskCheckpoints& t : tasks) {
    if (!t.left_out.empty()) {
      std::printf("%-32s (left out: %s)\n", t.task.c_str(), t.left_out.c_str());
      continue;
    }
    if (t.directory.empty()) {
      std::printf("%-32s (no checkpoint directory)\n", t.task.c_str());
      continue;
    }
    if (t.checkpoints.empty()) {
      std::printf("%-32s (none in %s)\n", t.task.c_str(), t.directory.c_str());
    }
    for (const CheckpointInfo& c : t.checkpoints) {
      std::printf("%-32s %8lld %10s %-19s %-8s %s\n", t.task.c_str(),
                  static_cast<long long>(c.step), Bytes(c.bytes).c_str(),
                  Time(c.mtime_unix_ms).c_str(), c.verified ? "yes" : "CORRUPT", c.path.c_str());
      if (!c.verified && !c.problem.empty()) std::printf("%-32s   %s\n", "", c.problem.c_str());
    }
  }
}

}  // namespace

int CheckpointCommand(const Args& args) {
  std::string action, output = "human";
  int64_t step = -1;
  ConnectionFlags remote;
  po::options_description options("checkpoint");
  options.add_options()
      ("action", po::value(&action)->required(), "save, restore or list")
      ("step", po::value(&step), "save: the step to name it (default: global_step); "
                                 "restore: the step (default: the newest that verifies)")
      ("output", po::value(&output), "human|json");
  AddConnectionFlags(options, remote);
  po::positional_options_description positional;
  positional.add("action", 1);
  po::variables_map vm = ParseArgs(args, options, positional);
  if (action != "save" && action != "restore" && action != "list") {
    throw UsageError("checkpoint what? 'save', 'restore' or 'list'");
  }
  const bool has_step = vm.count("step") > 0;
  if (has_step && action == "list") throw UsageError("checkpoint list takes no --step");
  if (has_step && step < 0) throw UsageError("--step must not be negative");
  const OutputFormat format = ParseOutputFormat(output, false);

  auto io = kj::setupAsyncIo();
  auto client = ConnectToTarget(io, remote);
  if (!client.ok()) return ReportError(client.status(), format);
  StatusOr<std::vector<TaskCheckpoints>> result = errors::Internal("no action");
  if (action == "save") {
    result = (*client)->SaveCheckpoint(has_step ? std::optional<int64_t>(step) : std::nullopt,
                                       remote.timeout());
  } else if (action == "restore") {
    result = (*client)->RestoreCheckpoint(has_step ? step : Client::kLatestCheckpoint,
                                          remote.timeout());
  } else {
    result = (*client)->ListCheckpoints(remote.timeout());
  }
  if (!result.ok()) return ReportError(result.status(), format);
  if (format == OutputFormat::kJson) {
    std::cout << DumpJson(ReportsJson(action, *result)) << std::endl;
  } else if (action == "list") {
    PrintList(*result);
  } else {
    PrintSavedOrRestored(action, *result);
  }
  return 0;
}

}  // namespace tfd::cli
