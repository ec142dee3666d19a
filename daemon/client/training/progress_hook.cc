#include "daemon/client/training/progress_hook.h"

#include <algorithm>

#include "api/train_signature.h"
#include "daemon/client/training/training_session.h"

namespace tfd::training {

namespace sig = train::signature;

std::optional<double> SummaryScalar(const Tensor& t) {
  switch (t.dtype()) {
    case DType::kFloat32:
    case DType::kFloat64:
    case DType::kInt32:
    case DType::kInt64:
      break;
    default:
      return std::nullopt;
  }
  if (!t.initialized() || t.num_elements() != 1) return std::nullopt;
  return ScalarValue(t);
}

Status ProgressHook::Begin(TrainingSession& session) {
  has_loss_ = session.Has(sig::kLoss);
  has_epoch_ = session.Has(sig::kEpoch);
  if (session.Has(sig::kEpochs)) {
    TFD_ASSIGN_OR_RETURN(Tensor t, session.ConstValue(sig::kEpochs));
    planned_epochs_ = ScalarValue(t);
  }
  return OkStatus();
}

void ProgressHook::StartClock(TrainingSession& session) {
  if (started_) return;
  started_ = true;
  start_ = last_report_ = session.steps_began().value_or(Clock::now());
}

Status ProgressHook::BeforeRun(TrainingSession& session, StepArgs& args) {
  loss_at_ = has_loss_ ? args.AddFetch(sig::kLoss) : -1;
  epoch_at_ = has_epoch_ ? args.AddFetch(sig::kEpoch) : -1;
  return OkStatus();
}

Status ProgressHook::AfterRun(TrainingSession& session, const StepValues& values) {
  if (loss_at_ >= 0) {
    const std::optional<double> loss = SummaryScalar(values.fetches[loss_at_]);
    p_.has_loss = loss.has_value();
    p_.loss = loss.value_or(NAN);
  }
  if (epoch_at_ >= 0) p_.epoch = ScalarValue(values.fetches[epoch_at_]);
  if (session.local_steps() == 1) first_loss_ = p_.loss;
  StartClock(session);
  const auto now = Clock::now();
  if (now - last_report_ >= options_.every) Report(session, now);
  return OkStatus();
}

Status ProgressHook::End(TrainingSession& session, const Status& status) {
  StartClock(session);
  p_.local_steps = session.local_steps();
  p_.global_step = session.global_step();
  if (status.ok()) Report(session, Clock::now());
  return OkStatus();
}

void ProgressHook::Report(TrainingSession& session, Clock::time_point now) {
  TrainProgress& p = p_;
  p.local_steps = session.local_steps();
  p.global_step = session.global_step();
  const double interval = std::chrono::duration<double>(now - last_report_).count();
  p.seconds = std::chrono::duration<double>(now - start_).count();
  if (interval > 0) p.steps_per_second = (p.local_steps - steps_at_report_) / interval;
  p.seconds_left = -1;
  const int64_t last = options_.last_step;
  if (interval > 0 && last > 0 && global_at_report_ >= 0 && p.global_step > global_at_report_) {
    const double rate = (p.global_step - global_at_report_) / interval;
    p.seconds_left = std::max(0.0, (last - p.global_step) / rate);
  } else if (interval > 0 && planned_epochs_ > 0 && epoch_at_report_ >= 0 &&
             p.epoch > epoch_at_report_) {
    const double rate = (p.epoch - epoch_at_report_) / interval;
    p.seconds_left = std::max(0.0, (planned_epochs_ - p.epoch) / rate);
  }
  last_report_ = now;
  steps_at_report_ = p.local_steps;
  global_at_report_ = p.global_step;
  epoch_at_report_ = p.epoch;
  if (options_.on_progress) options_.on_progress(p);
}

}  // namespace tfd::training
