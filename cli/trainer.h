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
// runs none. The chief checkpoints periodically and at the end, and
// releases parked sync replicas when it stops. At the end each worker
// evaluates the test accuracy when the graph has it.
//
// Thread-safety: one thread, the one that owns the Client.
#pragma once

#include <chrono>
#include <cmath>
#include <functional>
#include <optional>
#include <vector>
#include <string>
#include <utility>

#include "common/graph_def.h"
#include "daemon/client/client.h"

namespace tfd::cli {

struct TrainerOptions {
  int64_t max_steps = 0;                   // 0: the graph's train/max_steps, if any
  std::optional<bool> chief;               // unset: IsChief
  std::chrono::milliseconds init_timeout{120000};  // cluster and init barriers
  std::chrono::milliseconds progress_every{1000};
  int64_t checkpoint_every_steps = 0;      // 0: no step-based checkpoints
  double checkpoint_every_seconds = 0;     // 0: no time-based checkpoints
  // Saves a checkpoint of the cluster's variables at this global step.
  std::function<Status(int64_t global_step)> save_checkpoint;
  // When set, the chief asks it once the cluster is up, and saves no
  // checkpoint when it answers false (no task keeps checkpoints): how the
  // default policy stays quiet on a cluster without --checkpoint-dir.
  std::function<StatusOr<bool>()> cluster_keeps_checkpoints;
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
};

struct TrainProgress {
  int64_t local_steps = 0;   // steps this worker ran
  int64_t global_step = -1;  // after the last step; -1 when the graph does not say
  double epoch = -1;         // input epochs read; -1 when unknown
  double loss = NAN;
  double steps_per_second = 0;   // this worker's, over the last interval
  double seconds = 0;            // since the first step
  double seconds_left = -1;      // estimate; -1 when unknown
};

struct TrainResult {
  TrainProgress last;
  double first_loss = NAN;     // of the first step
  std::string stopped;         // why: "input exhausted", "reached step N"
  std::optional<double> accuracy;
  int64_t checkpoints = 0;     // saved by this worker (the chief)
  bool chief = false;
  bool initialized = false;    // this worker ran the initializer (or part of it)
  std::vector<std::string> initialized_variables;  // which, when only some were
};

class Trainer {
 public:
  Trainer(Client& client, GraphDef graph, TrainerOptions options);

  // Trains; `on_progress` is called at most every progress_every, and once
  // after the last step.
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
  Status Prepare(TrainResult& result);
  Status RunIfPresent(const char* node, const char* what);

  Client& client_;
  GraphDef graph_;
  TrainerOptions options_;
};

// Whether `task` ("/job:worker/replica:0/task:0") is the chief of `cluster`
// by TensorFlow's rule (ClusterSpec::ChiefTask); in a cluster with neither
// a chief nor a worker job, task 0 of any job.
bool IsChief(const std::string& task, const ClusterSpec& cluster);

}  // namespace tfd::cli
