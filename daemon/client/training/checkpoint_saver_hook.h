// CheckpointSaverHook: the chief's checkpoints of the cluster, as TF's
// CheckpointSaverHook: before the first step when it initialized variables
// (a state no checkpoint holds), every so many global steps or seconds, and
// at the end. A save that fails before the end is reported (on_failed) and
// tried again an interval later; it neither ends the run nor recovers. The
// final save is the one the run's result depends on: one that fails as a
// lost task fails a step is tried once more after a recovery, and one that
// still fails ends the run with its error. Listeners (TF1's
// CheckpointSaverListener) may be told around each save.
//
//   CheckpointSaverHook saver({.every_seconds = 600, .save = Save, .on_failed = Tell});
//   TrainingSession session(client, graph, options, {&saver});
//
// Thread-safety: the session's thread.
#pragma once

#include <chrono>
#include <functional>

#include "daemon/client/client.h"
#include "daemon/client/training/session_hook.h"

namespace tfd::training {

// A cluster checkpoint the chief could not save.
struct CheckpointFailure {
  Status error;             // names each task that failed, its file and the system's reason
  int64_t step = -1;        // the global step this trainer had seen when it tried
  int in_a_row = 0;         // failed saves since this run's last good one (1, 2...)
  int64_t last_saved = -1;  // the step this run last saved; -1: none yet
};

struct CheckpointSaverOptions {
  int64_t every_steps = 0;   // 0: no step-based checkpoints
  double every_seconds = 0;  // 0: no time-based checkpoints
  // Saves a checkpoint of the cluster's variables through `client` (the
  // session's, which a recovery may have replaced), named for the global
  // step it holds (the cluster's steps are held while it is taken);
  // returns that step. Unset: the hook saves nothing.
  std::function<StatusOr<int64_t>(Client& client)> save;
  // Told of each save that failed. Training goes on (the cluster's newest
  // complete checkpoint is still there) and the next save comes after the
  // interval, counted from the failed one; only the final save's failure
  // ends the run.
  std::function<void(const CheckpointFailure& failure)> on_failed;
  // When set, asked once the cluster is up; no checkpoint is saved when it
  // answers false (no task keeps checkpoints): how a default policy stays
  // quiet on a cluster without --checkpoint-dir. Its error ends the run.
  std::function<StatusOr<bool>(Client& client)> cluster_keeps_checkpoints;
  // TF1's CheckpointSaverListener, each optional: before_save is told the
  // global step before each save this hook tries, after_save the step each
  // successful one holds (true: stop the run, as TF1's may ask), and end
  // the global step once the final save is done. An error from any of them
  // ends the run with it (a failed save does not).
  std::function<Status(int64_t global_step)> before_save;
  std::function<StatusOr<bool>(int64_t global_step)> after_save;
  std::function<Status(int64_t global_step)> end;
};

class CheckpointSaverHook : public SessionHook {
 public:
  explicit CheckpointSaverHook(CheckpointSaverOptions options);

  Status AfterCreateSession(TrainingSession& session) override;
  Status AfterRun(TrainingSession& session, const StepValues& values) override;
  void AfterRestore(TrainingSession& session, int64_t step) override;
  Status End(TrainingSession& session, const Status& status) override;

  int64_t saved() const { return saved_; }    // checkpoints this run saved
  int64_t failed() const { return failed_; }  // saves it tried that failed

 private:
  using Clock = std::chrono::steady_clock;
  // Saves at the model's step unless saved (or restored) there already.
  Status Save(TrainingSession& session);
  // When the next save is due: once the global step has passed another
  // multiple of every_steps (other workers move it too, so it may skip the
  // multiple itself), or every_seconds have passed, both counted from the
  // last attempt, successful or not, so that a save that fails (a full
  // disk) is tried again after the interval rather than after every step.
  bool Due(int64_t global_step, Clock::time_point now) const;

  const CheckpointSaverOptions options_;
  bool on_ = false;              // this worker saves (set before the first step)
  bool counting_ = false;        // the seconds count from the first step
  int64_t at_step_ = -1;         // the model's step of the last save or restore
  int64_t tried_step_ = -1;      // of the last attempt, or where the steps count from
  Clock::time_point tried_at_ = Clock::now();
  int64_t last_saved_ = -1;      // by this run
  int failed_in_a_row_ = 0;
  int64_t saved_ = 0, failed_ = 0;
  Status listener_error_;  // a listener's, which the next call returns
};

}  // namespace tfd::training
