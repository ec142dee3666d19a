// Trainer: the between-graph training loop `tfctl train` runs on one
// worker, driving a graph through the names of api/train_signature.h.
//
//   Trainer trainer(*client, graph, options);
//   TFD_ASSIGN_OR_RETURN(TrainResult r, trainer.Run([](const TrainProgress& p) { ... }));
//
// The chief (chief:0 if the cluster has a chief job, else worker:0, unless
// told otherwise) waits for the whole
// cluster, then initializes the global variables that are not initialized
// already (restored from a checkpoint by their ps tasks: those keep their
// values), and runs the sync-replica chief init; every other worker waits on the
// cluster's init barrier for those same variables. Each worker then resets
// its input to epoch 0 and steps until its input ends (OUT_OF_RANGE), the global
// step reaches the last step (--steps, else the graph's train/max_steps),
// or an error; a run whose last step the global step has reached already
// runs none. The chief checkpoints before its first step when it
// initialized variables, periodically and at the end, and releases parked
// sync replicas when it stops. A save that fails before the end is
// reported (on_checkpoint_failed) and tried again an interval later; it
// neither ends the run nor recovers. At the end each worker
// evaluates the test accuracy when the graph has it.
//
// A step (or anything between the session and the first step) that fails
// with UNAVAILABLE or ABORTED (a task died, or a restarted one lost the
// step's state), or past its deadline, is recovered from as
// MonitoredTrainingSession does: connect again if the client's own task is the one that went, wait
// for every task again, open a new session (the old one's
// partitions died with the task), let the chief initialize what no
// checkpoint restored, and go on from the global step the ps tasks hold.
// The input is not reset: each worker goes on from where its input stands,
// unless the chief, finding the global step gone back, restores a
// checkpoint on every task (docs/training.md, "When a task dies").
// Asked to stop (SIGINT, SIGTERM), the loop ends after the running step and
// the chief saves once more, as at the end.
//
// Thread-safety: one thread, the one that owns the Client.
#pragma once

#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <vector>
#include <string>
#include <utility>

#include "common/graph_def.h"
#include "daemon/client/client.h"

namespace tfd::cli {

// A cluster checkpoint the chief could not save.
struct CheckpointFailure {
  Status error;             // names each task that failed, its file and the system's reason
  int64_t step = -1;        // the global step this trainer had seen when it tried
  int in_a_row = 0;         // failed saves since this run's last good one (1, 2...)
  int64_t last_saved = -1;  // the step this run last saved; -1: none yet
};

struct TrainerOptions {
  int64_t max_steps = 0;                   // 0: the graph's train/max_steps, if any
  std::chrono::milliseconds step_timeout{60000};  // the session's deadline per step
  std::optional<bool> chief;               // unset: IsChief
  std::chrono::milliseconds init_timeout{120000};  // cluster and init barriers
  std::chrono::milliseconds progress_every{1000};
  int64_t checkpoint_every_steps = 0;      // 0: no step-based checkpoints
  double checkpoint_every_seconds = 0;     // 0: no time-based checkpoints
  // Saves a checkpoint of the cluster's variables through `client` (the
  // trainer's, which a recovery may have replaced), named for the global
  // step it holds (the cluster's steps are held while it is taken); returns
  // that step.
  std::function<StatusOr<int64_t>(Client& client)> save_checkpoint;
  // Told of each save that failed. Training goes on (the cluster's newest
  // complete checkpoint is still there) and the next save comes after the
  // interval, counted from the failed one; only the final save's failure
  // ends the run.
  std::function<void(const CheckpointFailure& failure)> on_checkpoint_failed;
  // When set, the chief asks it once the cluster is up, and saves no
  // checkpoint when it answers false (no task keeps checkpoints): how the
  // default policy stays quiet on a cluster without --checkpoint-dir.
  std::function<StatusOr<bool>(Client& client)> cluster_keeps_checkpoints;
  // Restores a checkpoint of the cluster on every task that keeps them (the
  // variables and each dataset's input position): the one of `step`, or with
  // Client::kLatestCheckpoint the newest every task holds; returns the step
  // restored. Called when the model is at, or went back to, a saved step
  // (Trainer::PlaceInput, and the chief's recoveries); NOT_FOUND or FAILED_PRECONDITION (no
  // such checkpoint everywhere, no task keeping any) only skip it.
  std::function<StatusOr<int64_t>(Client& client, int64_t step)> restore_checkpoint;
  bool evaluate = true;
  // When set, called every `summary_every_steps` of this worker's steps and
  // after the last one with the step (global when the graph has one) and
  // the value of every scalar `summaries/TAG` node as TAG, plus
  // "global_step/sec" (the rate since the previous call), as
  // MonitoredTrainingSession's summary and step-counter hooks do. Its
  // error ends the training.
  std::function<Status(int64_t step, const std::vector<std::pair<std::string, double>>& scalars)>
      write_summaries;
  int64_t summary_every_steps = 100;  // save_summaries_steps
  // Failed steps recovered from (above) before the error ends the run; each
  // recovery waits at most init_timeout for the cluster.
  int max_recoveries = 10;
  // Told before each recovery why, and which one it is (1, 2...).
  std::function<void(const Status& why, int recovery)> on_recovery;
  // When set, a recovery that finds its own connection lost (the client's
  // task died; a supervisor may be restarting it) connects again with it.
  std::function<StatusOr<std::unique_ptr<Client>>()> reconnect;
  // Polled between steps: true ends the loop as if the last step had been
  // reached, with `stopped` naming what it answers (set by a signal handler).
  std::function<std::string()> stop_requested;
};

struct TrainProgress {
  int64_t local_steps = 0;   // steps this worker ran
  int64_t global_step = -1;  // after the last step; -1 when the graph does not say
  double epoch = -1;         // input epochs read; -1 when unknown
  // The graph's loss when it has one that is a numeric scalar (has_loss);
  // NaN or an infinity when training diverged.
  bool has_loss = false;
  double loss = NAN;
  double steps_per_second = 0;   // this worker's, over the last interval
  double seconds = 0;            // since the first step
  double seconds_left = -1;      // estimate; -1 when unknown
};

struct TrainResult {
  TrainProgress last;
  double first_loss = NAN;     // of the first step, when last.has_loss
  std::string stopped;         // why: "input exhausted", "reached step N"
  std::optional<double> accuracy;
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

  // The client the trainer uses now: the one it was given, or the one a
  // recovery connected.
  Client& client() { return *client_; }

  // Opens a session on the client's task, trains, and closes it;
  // `on_progress` is called at most every progress_every, and once after
  // the last step.
  StatusOr<TrainResult> Run(const std::function<void(const TrainProgress&)>& on_progress);

 private:
  bool Has(const char* node) const;
  StatusOr<Tensor> ConstValue(const char* node) const;
  // What the init op assigns: each variable and its Assign node. The
  // barrier waits for these variables.
  struct InitTarget {
    std::string variable, assign;
  };
  std::vector<InitTarget> InitTargets() const;
  // The chief's initialization: nothing when every variable is initialized
  // (restored by its ps), `init` when none is, else only the Assigns of the
  // uninitialized ones, so restored values are never overwritten.
  Status Initialize(TrainResult& result);
  // Waits for every task of the cluster, and notes (restored_alone_) the
  // tasks whose variables went back to their own checkpoint when they
  // restarted while the other tasks' variables and every worker's input
  // stayed where they were (TaskStatus.restoredAlone): whichever trainer
  // sees one first restores that checkpoint on every task before it steps
  // again, so that no trainer steps ahead on the restored task with input
  // the restore would take back, and none waits on another (a chief may
  // have finished, or be slow).
  Status WaitForCluster();
  // Waits for the cluster or the chief's initialization. A chief whose
  // caller has just waited for the cluster (a recovery) does not wait again.
  Status Prepare(TrainResult& result, bool cluster_waited = false);
  // After a failed step: a new session, prepared as at the start.
  Status Recover(TrainResult& result);
  // Where the input starts, given the global step `global` the model is at:
  // a new model (0, or a graph without a global step) reads from epoch 0;
  // a model at a saved step has that checkpoint restored on every task, so
  // each worker's input is where it stood when the model was saved (and
  // every ps holds that step's values); otherwise the input stays where it
  // stands. Every trainer does this, not only the chief, so that none
  // steps with its input where an earlier run left it; a restore by a
  // trainer that starts later takes back the steps of one that started
  // sooner together with the input they read, so the two stay consistent.
  Status PlaceInput(TrainResult& result, int64_t global);
  // Restores checkpoint `step` (kLatestCheckpoint: the newest on every task)
  // everywhere; the step restored, or nullopt when there was none.
  StatusOr<std::optional<int64_t>> RestoreAt(TrainResult& result, int64_t step);
  // train/global_step_var, read directly; -1 when the graph has none.
  StatusOr<int64_t> ReadGlobalStep();
  Status Train(TrainResult& result, const std::function<void(const TrainProgress&)>& on_progress);
  Status RunIfPresent(const char* node, const char* what);

  Client* client_;
  std::unique_ptr<Client> reconnected_;  // owns *client_ after a reconnect
  GraphDef graph_;
  TrainerOptions options_;
  std::vector<std::string> restored_alone_;  // at the last look; cleared by a restore
};

// Whether `task` ("/job:worker/replica:0/task:0") is the chief of `cluster`
// by TensorFlow's rule (ClusterSpec::ChiefTask); in a cluster with neither
// a chief nor a worker job, task 0 of any job.
bool IsChief(const std::string& task, const ClusterSpec& cluster);

}  // namespace tfd::cli
