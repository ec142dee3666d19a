// tfctl train: the training loop of one worker (cli/trainer.h), with
// progress on stderr and the result on stdout. With tfd's flags after "--"
// it hosts that worker task itself (daemon/task_host.h), as a TensorFlow
// program that starts its own server does, and steps it without a socket.
#include <kj/async-io.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "cli/connection_flags.h"
#include "daemon/client/training/event_file.h"
#include "cli/trainer.h"
#include "daemon/client/training/signal_stop_hook.h"
#include "daemon/task_host.h"
#include "daemon/tfd_config.h"

namespace tfd::cli {
namespace {

// The step of the checkpoint a cluster save or restore answered with.
StatusOr<int64_t> StepOf(const std::vector<TaskCheckpoints>& tasks, const char* done) {
  for (const TaskCheckpoints& task : tasks) {
    if (!task.checkpoints.empty()) return task.checkpoints.front().step;
  }
  return errors::NotFound("no task ", done, " a checkpoint");
}
namespace po = boost::program_options;

struct TrainFlags {
  std::string file;
  ConnectionFlags remote;
  int64_t steps = 0;
  std::string chief = "auto";
  int64_t checkpoint_every = 0;
  double checkpoint_secs = 0;
  bool checkpoint_flags = false;  // either flag given: no default policy
  double init_timeout_s = 120;
  double step_timeout_s = 60;
  double progress_s = -1;
  bool no_eval = false;
  std::string output = "human";
  std::string logdir;          // TensorBoard event files; empty: none
  int64_t summary_steps = 100;
  int max_recoveries = 10;
  // The task this process hosts and trains through (tfd's flags after
  // "--"); none: the task at --target runs in its own tfd.
  std::optional<TfdConfig> host;
};

// Everything after "--": tfd's flags for the task to host, parsed as tfd
// parses them (its environment variables too).
TfdConfig ParseHostedTask(const Args& tfd_flags) {
  auto config = ParseTfdFlags(tfd_flags, [](const char* v) { return std::getenv(v); });
  if (!config.ok()) throw UsageError("the task's flags after --: " + config.status().message());
  if (config->help || config->version) {
    throw UsageError("the task's flags after -- cannot ask for --help or --version (tfd --help "
                     "lists them)");
  }
  return *config;
}

// Whether `s` is a number of seconds a flag may give: above 0 and below
// 1e9, as `run` checks its --timeout (NaN fails both comparisons).
bool PositiveSeconds(double s) { return s > 0 && s < 1e9; }

// The numeric flags, as parsed into `f`: a value out of range is a
// UsageError (exit 2), as run's and submit's are. --steps and
// --progress-every are checked only when given: their defaults (0, -1)
// mean "the graph's" and "1 s on a terminal, else 10 s".
void CheckNumbers(const TrainFlags& f, const po::variables_map& vm) {
  if (vm.count("steps") > 0 && f.steps < 1) {
    throw UsageError(
        "--steps must be at least 1 (without it: the graph's train/max_steps, "
        "else until the input ends)");
  }
  if (f.checkpoint_every < 0 || !(f.checkpoint_secs >= 0 && f.checkpoint_secs < 1e9)) {
    throw UsageError("checkpoint intervals must not be negative");
  }
  if (f.summary_steps <= 0) throw UsageError("--summary-steps must be positive");
  if (f.max_recoveries < 0) throw UsageError("--max-recoveries must not be negative");
  if (!PositiveSeconds(f.init_timeout_s) || !PositiveSeconds(f.step_timeout_s)) {
    throw UsageError("--init-timeout and --step-timeout must be positive");
  }
  if (vm.count("progress-every") > 0 && !PositiveSeconds(f.progress_s)) {
    throw UsageError("--progress-every must be a positive number of seconds");
  }
}

TrainFlags Parse(const Args& all) {
  TrainFlags f;
  Args args = all;
  std::optional<Args> tfd_flags;
  if (auto dash = std::find(args.begin(), args.end(), "--"); dash != args.end()) {
    tfd_flags.emplace(dash + 1, args.end());
    args.erase(dash, args.end());
  }
  po::options_description options("train");
  options.add_options()
      ("file", po::value(&f.file)->required(), "the graph file, binary or text; - reads stdin")
      ("steps", po::value(&f.steps), "stop at this global step (default: the graph's, or "
                                      "when the input ends)")
      ("chief", po::value(&f.chief), "yes|no|auto: whether this worker initializes and "
                                     "checkpoints (auto: chief:0 if the cluster has a chief "
                                     "job, else worker:0)")
      ("checkpoint-every", po::value(&f.checkpoint_every), "chief: checkpoint every N global steps")
      ("checkpoint-secs", po::value(&f.checkpoint_secs), "chief: checkpoint every S seconds "
                                                         "(without either flag: every 600 s and "
                                                         "at the end, when a task has a "
                                                         "--checkpoint-dir; 0 with no "
                                                         "--checkpoint-every: never)")
      ("init-timeout", po::value(&f.init_timeout_s), "seconds to wait for the cluster and the "
                                                     "chief's initialization")
      ("step-timeout", po::value(&f.step_timeout_s), "seconds one step may take")
      ("progress-every", po::value(&f.progress_s), "seconds between progress reports "
                                                   "(default 1 on a terminal, else 10)")
      ("no-eval", po::bool_switch(&f.no_eval), "skip the test-set evaluation at the end")
      ("logdir", po::value(&f.logdir), "write TensorBoard event files here: every summaries/* "
                                       "scalar and global_step/sec")
      ("summary-steps", po::value(&f.summary_steps), "steps of this worker between summaries "
                                                     "in --logdir, default 100")
      ("max-recoveries", po::value(&f.max_recoveries), "failed steps (UNAVAILABLE, ABORTED, "
                                                       "DEADLINE_EXCEEDED) to "
                                                       "recover from by waiting for the cluster "
                                                       "and opening a new session, default 10; "
                                                       "0: none")
      ("output", po::value(&f.output), "human|json");
  AddConnectionFlags(options, f.remote);
  po::positional_options_description positional;
  positional.add("file", 1);
  po::variables_map vm = ParseArgs(args, options, positional);
  CheckNumbers(f, vm);
  f.checkpoint_flags = vm.count("checkpoint-every") > 0 || vm.count("checkpoint-secs") > 0;
  if (f.chief != "yes" && f.chief != "no" && f.chief != "auto") {
    throw UsageError("--chief must be yes, no or auto, not '" + f.chief + "'");
  }
  if (tfd_flags) {
    if (vm.count("target") > 0) {
      throw UsageError("--target names a task in its own tfd; with tfd's flags after -- the "
                       "trainer hosts its task itself: give one or the other");
    }
    f.host = ParseHostedTask(*tfd_flags);
  }
  return f;
}

// MonitoredTrainingSession's save_checkpoint_secs.
constexpr double kDefaultCheckpointSecs = 600;
// One attempt to connect again to a --target that went away.
constexpr double kReconnectAttemptSecs = 1;

std::chrono::milliseconds Millis(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

// "12 s", "3 min 20 s".
std::string Duration(double s) {
  if (s < 0) return "?";
  const int64_t total = static_cast<int64_t>(std::lround(s));
  if (total < 60) return std::to_string(total) + " s";
  return std::to_string(total / 60) + " min " + std::to_string(total % 60) + " s";
}

std::string ProgressLine(const TrainProgress& p) {
  char buf[256];
  std::string line = "step " + std::to_string(p.local_steps);
  if (p.global_step >= 0) line += " (global " + std::to_string(p.global_step) + ")";
  if (p.epoch >= 0) {
    std::snprintf(buf, sizeof buf, "  epoch %.2f", p.epoch);
    line += buf;
  }
  if (p.has_loss) {
    // A diverged loss shows as nan or inf.
    std::snprintf(buf, sizeof buf, "  loss %.4f", p.loss);
    line += buf;
  }
  std::snprintf(buf, sizeof buf, "  %.1f steps/s", p.steps_per_second);
  line += buf;
  if (p.seconds_left >= 0) line += "  " + Duration(p.seconds_left) + " left";
  return line;
}

// The exit of a run that printed its result: 0, or, stopped by a signal,
// death by that signal (after the save), so a calling shell or script
// stops too rather than going on as if training had finished.
int Finish() {
  const int stop_signal = training::CaughtStopSignal();
  if (stop_signal == 0) return 0;
  std::fflush(nullptr);
  signal(stop_signal, SIG_DFL);
  raise(stop_signal);
  return 128 + stop_signal;
}

// When the chief saves after a failed save, as its flags say.
std::string NextSave(const TrainFlags& f) {
  const double secs = f.checkpoint_flags ? f.checkpoint_secs : kDefaultCheckpointSecs;
  std::string steps = f.checkpoint_every > 0
                          ? "at the next multiple of " + std::to_string(f.checkpoint_every) +
                                " global steps"
                          : "";
  std::string seconds = secs > 0 ? "in " + Duration(secs) : "";
  if (steps.empty()) return seconds.empty() ? "at the end" : seconds;
  return seconds.empty() ? steps : steps + " or " + seconds + ", whichever comes first";
}

Json ProgressJson(const TrainProgress& p) {
  // null: the graph has no loss, or no step ran (the loss is a step's fetch);
  // "nan", "inf": it diverged (cli/output.h).
  Json j{{"step", p.local_steps}, {"global_step", p.global_step},
         {"epoch", p.epoch >= 0 ? Json(p.epoch) : Json(nullptr)},
         {"loss", p.has_loss ? FloatToJson(p.loss) : Json(nullptr)},
         {"steps_per_second", p.steps_per_second}, {"seconds", p.seconds},
         {"seconds_left", p.seconds_left >= 0 ? Json(p.seconds_left) : Json(nullptr)}};
  return j;
}

// Where a run's progress and events go: stderr for people (one line kept
// open on a terminal), stdout as JSON lines with --output json.
struct Console {
  OutputFormat format;
  bool tty = isatty(STDERR_FILENO);
  bool line_open = false;  // a progress line on a terminal, not ended yet

  // Before a message of its own on stderr.
  const char* EndLine() {
    const char* end = line_open ? "\n" : "";
    line_open = false;
    return end;
  }
  void Progress(const TrainProgress& p) {
    if (format == OutputFormat::kJson) {
      Json j = ProgressJson(p);
      j["event"] = "progress";
      std::cout << DumpJson(j) << std::endl;
    } else if (tty) {
      std::fprintf(stderr, "\r%s   ", ProgressLine(p).c_str());
      line_open = true;
    } else {
      std::fprintf(stderr, "%s\n", ProgressLine(p).c_str());
    }
    std::fflush(stderr);
  }
  void Recovering(const Status& why, int recovery, int max_recoveries) {
    if (format == OutputFormat::kJson) {
      std::cout << DumpJson(Json{{"event", "recovering"}, {"recovery", recovery},
                                 {"error", why.ToString()}})
                << std::endl;
    }
    std::fprintf(stderr, "%s%s; waiting for the cluster and opening a new session (recovery %d "
                 "of at most %d)\n", EndLine(), why.ToString().c_str(), recovery, max_recoveries);
  }
  void CheckpointFailed(const CheckpointFailure& failed, const std::string& next_save) {
    if (format == OutputFormat::kJson) {
      std::cout << DumpJson(Json{{"event", "checkpoint_failed"},
                                 {"global_step", failed.step},
                                 {"failures_in_a_row", failed.in_a_row},
                                 {"last_saved_step", failed.last_saved},
                                 {"error", failed.error.ToString()}})
                << std::endl;
    }
    const std::string last =
        failed.last_saved >= 0
            ? "the last saved by this run is step " + std::to_string(failed.last_saved)
            : "none saved by this run yet";
    std::fprintf(stderr, "%scheckpoint FAILED (%d in a row; %s): %s; training goes on, and "
                 "saves again %s\n", EndLine(), failed.in_a_row, last.c_str(),
                 failed.error.ToString().c_str(), next_save.c_str());
  }
};

// The chief's checkpoint policy, as the flags say: saves named for the
// global step the cut holds, and restores for any run that finds the model
// at a saved step, whatever its own policy.
void SetCheckpointPolicy(const TrainFlags& f, TrainerOptions& options) {
  options.checkpoint_every_steps = f.checkpoint_every;
  options.checkpoint_every_seconds = f.checkpoint_flags ? f.checkpoint_secs : kDefaultCheckpointSecs;
  if (!f.checkpoint_flags || f.checkpoint_every > 0 || f.checkpoint_secs > 0) {
    options.save_checkpoint = [&f](Client& client) -> StatusOr<int64_t> {
      TFD_ASSIGN_OR_RETURN(auto tasks, client.SaveCheckpoint(std::nullopt, f.remote.timeout()));
      return StepOf(tasks, "saved");
    };
  }
  options.restore_checkpoint = [&f](Client& client, int64_t step) -> StatusOr<int64_t> {
    TFD_ASSIGN_OR_RETURN(auto tasks, client.RestoreCheckpoint(step, f.remote.timeout()));
    return StepOf(tasks, "restored");
  };
  if (!f.checkpoint_flags) {
    // The default policy asks first: a cluster without a --checkpoint-dir
    // (FAILED_PRECONDITION, naming the tasks asked) trains without one.
    options.cluster_keeps_checkpoints = [&f](Client& client) -> StatusOr<bool> {
      auto listed = client.ListCheckpoints(f.remote.timeout(), /*verify=*/false);
      if (listed.ok()) return true;
      if (listed.status().code() == Code::kFailedPrecondition) return false;
      return listed.status().WithContext("asking which tasks keep checkpoints");
    };
  } else if (options.save_checkpoint) {
    // Checkpoints asked for where no task can keep any is a mistake to say
    // at once, not a save to fail every interval.
    options.cluster_keeps_checkpoints = [&f](Client& client) -> StatusOr<bool> {
      auto listed = client.ListCheckpoints(f.remote.timeout(), /*verify=*/false);
      if (!listed.ok()) {
        return listed.status().WithContext("--checkpoint-every or --checkpoint-secs given");
      }
      return true;
    };
  }
}

// The trainer's hooks, as the flags say, reporting to `console`.
TrainerOptions Options(const TrainFlags& f, Console& console, training::EventFileWriter* events) {
  TrainerOptions options;
  options.max_steps = f.steps;
  options.step_timeout = Millis(f.step_timeout_s);
  options.max_recoveries = f.max_recoveries;
  options.on_recovery = [&console, &f](const Status& why, int recovery) {
    console.Recovering(why, recovery, f.max_recoveries);
  };
  options.on_checkpoint_failed = [&console, &f](const CheckpointFailure& failed) {
    console.CheckpointFailed(failed, NextSave(f));
  };
  options.stop_requested = training::StopSignalReason;
  if (f.chief != "auto") options.chief = f.chief == "yes";
  options.init_timeout = Millis(f.init_timeout_s);
  options.progress_every = Millis(f.progress_s >= 0 ? f.progress_s : (console.tty ? 1 : 10));
  SetCheckpointPolicy(f, options);
  options.evaluate = !f.no_eval;
  if (events != nullptr) {
    options.summary_every_steps = f.summary_steps;
    options.write_summaries = [events](int64_t step, const summary::Summary& s) {
      return events->Write(step, s);
    };
  }
  return options;
}

void PrintJson(const TrainResult& result, const std::string& task) {
  const TrainProgress& last = result.last;
  Json j = ProgressJson(last);
  j["event"] = "done";
  j["task"] = task;
  j["chief"] = result.chief;
  j["initialized"] = result.initialized;
  j["initialized_variables"] = result.initialized_variables;
  j["stopped"] = result.stopped;
  j["first_loss"] = last.has_loss ? FloatToJson(result.first_loss) : Json(nullptr);
  j["mean_steps_per_second"] = last.seconds > 0 ? last.local_steps / last.seconds : 0;
  j["checkpoints"] = result.checkpoints;
  j["checkpoint_failures"] = result.checkpoint_failures;
  j["recoveries"] = result.recoveries;
  j["restored_checkpoints"] = result.restored_steps;
  j["accuracy"] = result.accuracy ? FloatToJson(*result.accuracy) : Json(nullptr);
  j["auc"] = result.auc ? FloatToJson(*result.auc) : Json(nullptr);
  std::cout << DumpJson(j) << std::endl;
}

void PrintHuman(const TrainResult& result, const std::string& task) {
  const TrainProgress& last = result.last;
  const double rate = last.seconds > 0 ? last.local_steps / last.seconds : 0;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s: %lld steps in %s (%.1f steps/s), %s", task.c_str(),
                static_cast<long long>(last.local_steps), Duration(last.seconds).c_str(), rate,
                result.stopped.c_str());
  std::cout << buf;
  if (last.global_step >= 0) std::cout << "; global step " << last.global_step;
  std::cout << "\n";
  if (!result.initialized_variables.empty()) {
    std::cout << "initialized the variables no checkpoint held (the rest were restored):";
    for (const std::string& v : result.initialized_variables) std::cout << " " << v;
    std::cout << "\n";
  }
  if (result.checkpoint_failures > 0) {
    std::cout << result.checkpoint_failures << " checkpoint"
              << (result.checkpoint_failures == 1 ? "" : "s") << " failed (" << result.checkpoints
              << " saved)\n";
  }
  if (result.recoveries > 0) {
    std::cout << "recovered from " << result.recoveries << " failed step"
              << (result.recoveries == 1 ? "" : "s") << "\n";
  }
  for (const int64_t step : result.restored_steps) {
    std::cout << "restored the checkpoint of step " << step
              << " on every task (variables and input positions)\n";
  }
  if (last.has_loss) {
    std::snprintf(buf, sizeof buf, "loss %.4f -> %.4f\n", result.first_loss, last.loss);
    std::cout << buf;
  }
  if (result.accuracy) {
    std::snprintf(buf, sizeof buf, "test accuracy %.4f\n", *result.accuracy);
    std::cout << buf;
  }
  if (result.auc) {
    std::snprintf(buf, sizeof buf, "held-out AUC %.4f\n", *result.auc);
    std::cout << buf;
  }
}

int Train(const TrainFlags& f, OutputFormat format) {
  auto graph = ReadGraphArg(f.file);
  if (!graph.ok()) return ReportError(graph.status(), format);
  std::unique_ptr<training::EventFileWriter> events;
  if (!f.logdir.empty()) {
    auto made = training::EventFileWriter::Create(f.logdir);
    if (!made.ok()) return ReportError(made.status(), format);
    events = std::move(made).value();
  }
  auto io = kj::setupAsyncIo();
  // Before every client of it, so that they go first.
  std::unique_ptr<TaskHost> host;
  if (f.host) {
    auto started = TaskHost::Start(*f.host, io, TaskHost::StderrLogger(*f.host));
    if (!started.ok()) return ReportError(started.status(), format);
    host = std::move(started).value();
  }
  auto connected = host ? StatusOr<std::unique_ptr<Client>>(host->LocalClient())
                        : ConnectToTarget(io, f.remote);
  if (!connected.ok()) return ReportError(connected.status(), format);

  Console console{format};
  TrainerOptions options = Options(f, console, events.get());
  // The task itself died: wait for its supervisor to bring it back as long
  // as for the rest of the cluster (--init-timeout), in attempts of at most
  // a second that the session repeats, so that a signal is noticed between
  // two. A hosted one is this process.
  options.reconnect = [&io, &f, &host]() -> StatusOr<std::unique_ptr<Client>> {
    if (host) return host->LocalClient();
    ConnectionFlags again = f.remote;
    again.timeout_s = std::min(f.init_timeout_s, kReconnectAttemptSecs);
    return ConnectToTarget(io, again);
  };
  Trainer trainer(**connected, std::move(*graph), options);
  training::CatchStopSignals();
  auto result = trainer.Run([&console](const TrainProgress& p) { console.Progress(p); });
  if (console.line_open) std::fputc('\n', stderr);
  if (!result.ok()) return ReportError(result.status(), format);
  if (format == OutputFormat::kJson) {
    PrintJson(*result, trainer.client().task());
  } else {
    PrintHuman(*result, trainer.client().task());
  }
  // A hosted task stops serving its peers before the process goes.
  if (host) host->Drain();
  return Finish();
}

}  // namespace

int TrainCommand(const Args& args) {
  const TrainFlags f = Parse(args);
  return Train(f, ParseOutputFormat(f.output, false));
}

}  // namespace tfd::cli
