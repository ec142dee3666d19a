// Trainer: a TrainingSession (training_session.h) with the hooks `tfctl
// train` uses, configured by one options struct: stop at a step or on
// request, progress, summaries, the chief's checkpoints, the test-set
// evaluation at the end. tfctl, train_bench and the Python package's
// default run all go through it, so they train the same way.
//
//   Trainer trainer(*client, graph, options);
//   TFD_ASSIGN_OR_RETURN(TrainResult r, trainer.Run([](const TrainProgress& p) { ... }));
//
// What the run does, from the session's start to its end, is
// TrainingSession's contract; what each option adds is its hook's:
// checkpoint_saver_hook.h (saves, failed saves, the final save),
// progress_hook.h, summary_hook.h, stop_at_step_hook.h (a run whose last
// step the global step has reached already runs none), signal_stop_hook.h
// (asked to stop, the loop ends after the running step and the chief saves
// once more, as at the end), evaluation_hook.h.
//
// Thread-safety: one thread, the one that owns the Client.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/graph_def.h"
#include "common/summary_proto.h"
#include "daemon/client/client.h"
#include "daemon/client/training/checkpoint_saver_hook.h"
#include "daemon/client/training/progress_hook.h"
#include "daemon/client/training/training_session.h"

namespace tfd::training {

struct TrainerOptions {
  int64_t max_steps = 0;                   // 0: the graph's train/max_steps, if any
  std::chrono::milliseconds step_timeout{60000};  // the session's deadline per step
  std::optional<bool> chief;               // unset: IsChief
  std::chrono::milliseconds init_timeout{120000};  // cluster and init barriers
  std::chrono::milliseconds progress_every{1000};
  int64_t checkpoint_every_steps = 0;      // 0: no step-based checkpoints
  double checkpoint_every_seconds = 0;     // 0: no time-based checkpoints
  // CheckpointSaverOptions::save, on_failed, cluster_keeps_checkpoints.
  std::function<StatusOr<int64_t>(Client& client)> save_checkpoint;
  std::function<void(const CheckpointFailure& failure)> on_checkpoint_failed;
  std::function<StatusOr<bool>(Client& client)> cluster_keeps_checkpoints;
  // SessionOptions::restore_checkpoint: any run may find the model at a
  // saved step, whatever its own save policy.
  std::function<StatusOr<int64_t>(Client& client, int64_t step)> restore_checkpoint;
  bool evaluate = true;
  // When set, SummaryHook's write, every `summary_every_steps` of this
  // worker's steps and after the last one.
  std::function<Status(int64_t step, const summary::Summary& summaries)> write_summaries;
  int64_t summary_every_steps = 100;  // save_summaries_steps
  // SessionOptions::max_recoveries, on_recovery, reconnect.
  int max_recoveries = 10;
  std::function<void(const Status& why, int recovery)> on_recovery;
  std::function<StatusOr<std::unique_ptr<Client>>()> reconnect;
  // Polled before each step: an answer other than "" ends the loop as if
  // the last step had been reached, with `stopped` saying it (StopRequestHook);
  // also while the session waits for the cluster or recovers
  // (SessionOptions::stop_requested), which it ends at once, saving nothing.
  std::function<std::string()> stop_requested;
};

struct TrainResult {
  TrainProgress last;
  double first_loss = NAN;     // of the first step, when last.has_loss
  std::string stopped;         // why: "input exhausted", "reached step N"
  std::optional<double> accuracy;
  std::optional<double> auc;  // eval/auc, when the graph has it
  int64_t checkpoints = 0;     // saved by this worker (the chief)
  int64_t checkpoint_failures = 0;  // saves it tried that failed
  int recoveries = 0;          // failed steps recovered from
  // Checkpoints this trainer restored on every task (at its start; the
  // chief also after a recovery), by step: the model and its input went
  // back together.
  std::vector<int64_t> restored_steps;
  bool chief = false;
  bool initialized = false;    // this worker ran the initializer (or part of it)
  std::vector<std::string> initialized_variables;  // which, when only some were
};

class Trainer {
 public:
  Trainer(Client& client, GraphDef graph, TrainerOptions options);
  ~Trainer();

  // The client the trainer uses now: the one it was given, or the one a
  // recovery connected.
  Client& client();

  // Opens a session on the client's task, trains, and closes it;
  // `on_progress` is called at most every progress_every, and once after
  // the last step.
  StatusOr<TrainResult> Run(const std::function<void(const TrainProgress&)>& on_progress);

 private:
  Client& client_;
  GraphDef graph_;
  TrainerOptions options_;
  // Every Run's, the last one last: a session owns the client a recovery
  // connected, which a later Run goes on with.
  std::vector<std::unique_ptr<TrainingSession>> sessions_;
};

}  // namespace tfd::training
