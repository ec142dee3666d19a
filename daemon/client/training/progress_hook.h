// ProgressHook: what a run shows while it trains (TF's LoggingTensorHook
// and step counter): the steps, the global step, the epoch and the loss
// (fetched with each step when the graph has summaries/loss and
// summaries/epoch), steps per second and an estimate of the time left,
// told to `on_progress` at most every `every`, and once at the end.
//
//   ProgressHook progress({.every = 10s, .last_step = 1000, .on_progress = Print});
//   ... after the run: progress.last(), progress.first_loss()
//
// Thread-safety: the session's thread.
#pragma once

#include <chrono>
#include <cmath>
#include <functional>

#include "daemon/client/training/session_hook.h"

namespace tfd::training {

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

struct ProgressOptions {
  std::chrono::milliseconds every{1000};
  int64_t last_step = 0;  // for the time left; 0: by the graph's train/epochs, if any
  std::function<void(const TrainProgress&)> on_progress;
};

class ProgressHook : public SessionHook {
 public:
  explicit ProgressHook(ProgressOptions options) : options_(std::move(options)) {}

  Status Begin(TrainingSession& session) override;
  Status BeforeRun(TrainingSession& session, StepArgs& args) override;
  Status AfterRun(TrainingSession& session, const StepValues& values) override;
  Status End(TrainingSession& session, const Status& status) override;

  // As of the last report, with the session's steps as of now.
  const TrainProgress& last() const { return p_; }
  double first_loss() const { return first_loss_; }  // NaN: no loss, or no step

 private:
  using Clock = std::chrono::steady_clock;
  // From when the first step was sent (session.steps_began()).
  void StartClock(TrainingSession& session);
  void Report(TrainingSession& session, Clock::time_point now);

  const ProgressOptions options_;
  TrainProgress p_;
  double first_loss_ = NAN;
  double planned_epochs_ = -1;
  bool has_loss_ = false, has_epoch_ = false;  // in the graph
  int loss_at_ = -1, epoch_at_ = -1;           // in this step's fetches
  bool started_ = false;
  Clock::time_point start_, last_report_;
  int64_t steps_at_report_ = 0, global_at_report_ = -1;
  double epoch_at_report_ = -1;
};

// A summary's value when it is a numeric scalar (NaN included: a loss that
// diverged is worth plotting); nullopt otherwise.
std::optional<double> SummaryScalar(const Tensor& t);

}  // namespace tfd::training
