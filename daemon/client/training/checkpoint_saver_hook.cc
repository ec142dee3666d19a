#include "daemon/client/training/checkpoint_saver_hook.h"

#include <algorithm>
#include <utility>

#include "daemon/client/training/training_session.h"

namespace tfd::training {

CheckpointSaverHook::CheckpointSaverHook(CheckpointSaverOptions options)
    : options_(std::move(options)) {}

bool CheckpointSaverHook::Due(int64_t global_step, Clock::time_point now) const {
  const int64_t every = options_.every_steps;
  return (every > 0 && global_step >= 0 &&
          global_step / every > std::max<int64_t>(tried_step_, 0) / every) ||
         (options_.every_seconds > 0 &&
          std::chrono::duration<double>(now - tried_at_).count() >= options_.every_seconds);
}

Status CheckpointSaverHook::AfterCreateSession(TrainingSession& session) {
  on_ = session.chief() && options_.save != nullptr;
  if (on_ && options_.cluster_keeps_checkpoints) {
    TFD_ASSIGN_OR_RETURN(on_, options_.cluster_keeps_checkpoints(session.client()));
  }
  // A chief that initialized variables starts from a state no checkpoint
  // holds: it saves it first, so that a ps dying before the first periodic
  // save restarts from here and every task's input goes back to where this
  // run began with it, instead of the model starting over while the input
  // reads on. A run that starts from restored variables and steps no
  // further saves nothing new.
  if (!session.initialized()) {
    at_step_ = tried_step_ = session.global_step();
    return OkStatus();
  }
  // A failure is reported and does not stop the run: the first periodic
  // save tries again.
  (void)Save(session);
  return std::exchange(listener_error_, OkStatus());
}

Status CheckpointSaverHook::AfterRun(TrainingSession& session, const StepValues& values) {
  if (!counting_) {
    // The seconds count from the first step.
    counting_ = true;
    tried_at_ = session.steps_began().value_or(Clock::now());
  }
  // A save that fails (a task's disk full or read-only, a task down) is
  // reported and tried again at the next interval; it ends nothing and
  // recovers nothing: a task that is down fails the next step, which
  // recovers.
  if (on_ && Due(session.global_step(), Clock::now())) (void)Save(session);
  return std::exchange(listener_error_, OkStatus());
}

void CheckpointSaverHook::AfterRestore(TrainingSession& session, int64_t step) {
  at_step_ = tried_step_ = step;
}

Status CheckpointSaverHook::End(TrainingSession& session, const Status& status) {
  if (!status.ok()) return OkStatus();
  Status saved = Save(session);
  if (listener_error_.ok() && Recoverable(saved)) {
    // A stop request cuts the recovery short: the save stays failed.
    Status recovered = session.RecoverFrom(saved);
    if (!recovered.ok()) {
      saved = std::move(recovered);
    } else if (!session.stopped_waiting()) {
      saved = Save(session);
    }
  }
  if (!listener_error_.ok()) return std::exchange(listener_error_, OkStatus());
  TFD_RETURN_IF_ERROR(saved.WithContext("the final checkpoint"));
  if (on_ && options_.end) return options_.end(session.global_step());
  return OkStatus();
}

// A failed save is told to on_failed and returned, and the schedule moves
// on all the same: the cluster's newest complete checkpoint is still
// there, and training goes on.
Status CheckpointSaverHook::Save(TrainingSession& session) {
  // A stop while the cluster was waited for: no session, no cut to save.
  if (!on_ || session.global_step() == at_step_ || session.stopped_waiting()) return OkStatus();
  const int64_t at = session.global_step();
  if (options_.before_save) {
    listener_error_ = options_.before_save(at);
    if (!listener_error_.ok()) return listener_error_;
  }
  auto saved = options_.save(session.client());
  if (!saved.ok()) {
    tried_step_ = at;
    tried_at_ = Clock::now();
    ++failed_;
    CheckpointFailure failure{
        saved.status().WithContext("checkpoint after step " + std::to_string(at)), at,
        ++failed_in_a_row_, last_saved_};
    if (options_.on_failed) options_.on_failed(failure);
    return failure.error;
  }
  // The cut may hold a global step other workers moved past this one's
  // last: that is where the model stands, and where a ps restarted from
  // this checkpoint is seen to have gone back from.
  session.NoteGlobalStep(*saved);
  at_step_ = last_saved_ = tried_step_ = session.global_step();
  tried_at_ = Clock::now();
  failed_in_a_row_ = 0;
  ++saved_;
  if (options_.after_save) {
    auto stop = options_.after_save(*saved);
    if (!stop.ok()) {
      listener_error_ = stop.status();
      return listener_error_;
    }
    if (*stop) session.RequestStop("a checkpoint listener asked to stop");
  }
  return OkStatus();
}

}  // namespace tfd::training
