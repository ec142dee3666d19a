#include "cli/trainer.h"

#include <cmath>
#include <map>

#include "api/train_signature.h"
#include "common/device_name.h"

namespace tfd::cli {
namespace {

namespace sig = train::signature;
using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// A fetched scalar as a double; NaN when it is not a numeric scalar.
constexpr std::string_view kSummaryPrefix = "summaries/";

double ScalarValue(const Tensor& t) {
  if (!t.initialized() || t.num_elements() != 1) return NAN;
  switch (t.dtype()) {
    case DType::kFloat32: return t.data<float>()[0];
    case DType::kFloat64: return t.data<double>()[0];
    case DType::kInt32: return t.data<int32_t>()[0];
    case DType::kInt64: return static_cast<double>(t.data<int64_t>()[0]);
    default: return NAN;
  }
}

// A summary's value when it is a numeric scalar (NaN included: a loss
// that diverged is worth plotting); nullopt otherwise.
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

// What a step fails with when a task died or was restarted under it: worth
// a new session once the cluster is whole again (MonitoredSession's
// AbortedError and UnavailableError).
bool Recoverable(const Status& s) {
  return s.code() == Code::kUnavailable || s.code() == Code::kAborted;
}

// A step or a save that ran past its deadline: a task stopped answering
// (SIGSTOP, a dropped link) without its connection closing. Recovered from
// like a lost task; the recovery's own wait for the cluster is bounded by
// --init-timeout, and one that times out ends the run.
bool StepRecoverable(const Status& s) {
  return Recoverable(s) || s.code() == Code::kDeadlineExceeded;
}

// When the chief saves next: once the global step has passed another
// multiple of `every_steps` (other workers move it too, so it may skip the
// multiple itself), or `every_seconds` have passed, both counted from the
// last attempt, successful or not, so that a save that fails (a full disk)
// is tried again after the interval rather than after every step.
class SaveSchedule {
 public:
  SaveSchedule(int64_t every_steps, double every_seconds)
      : every_steps_(every_steps), every_seconds_(every_seconds) {}

  bool Due(int64_t global_step, Clock::time_point now) const {
    return (every_steps_ > 0 && global_step >= 0 &&
            global_step / every_steps_ > std::max<int64_t>(step_, 0) / every_steps_) ||
           (every_seconds_ > 0 && Seconds(now - time_) >= every_seconds_);
  }
  // A save tried at `global_step`, at `now`.
  void Tried(int64_t global_step, Clock::time_point now) {
    step_ = global_step;
    time_ = now;
  }
  // The model is at `global_step` by a restore, or from the start: the
  // steps count from there.
  void CountStepsFrom(int64_t global_step) { step_ = global_step; }
  // The first step: the seconds count from there.
  void CountSecondsFrom(Clock::time_point now) { time_ = now; }

 private:
  const int64_t every_steps_;
  const double every_seconds_;
  int64_t step_ = -1;
  Clock::time_point time_ = Clock::now();
};

}  // namespace

bool IsChief(const std::string& task, const ClusterSpec& cluster) {
  const std::string chief = cluster.ChiefTask();
  if (!chief.empty()) return task == chief;
  auto name = DeviceName::Parse(task);
  return name.ok() && name->task.value_or(0) == 0;
}

Trainer::Trainer(Client& client, GraphDef graph, TrainerOptions options)
    : client_(&client), graph_(std::move(graph)), options_(std::move(options)) {}

bool Trainer::Has(const char* node) const {
  for (const NodeDef& n : graph_.nodes) {
    if (n.name == node) return true;
  }
  return false;
}

StatusOr<Tensor> Trainer::ConstValue(const char* node) const {
  for (const NodeDef& n : graph_.nodes) {
    if (n.name != node) continue;
    auto it = n.attrs.find("value");
    if (n.op != "Const" || it == n.attrs.end() || !std::holds_alternative<Tensor>(it->second)) {
      return errors::InvalidArgument("'", node, "' should be a Const node, not ", n.op);
    }
    return std::get<Tensor>(it->second);
  }
  return errors::NotFound("no node '", node, "'");
}

std::vector<Trainer::InitTarget> Trainer::InitTargets() const {
  std::map<std::string, const NodeDef*> by_name;
  for (const NodeDef& n : graph_.nodes) by_name[n.name] = &n;
  std::vector<InitTarget> targets;
  auto init = by_name.find(sig::kInit);
  if (init == by_name.end()) return targets;
  for (const std::string& input : init->second->inputs) {
    if (input.empty() || input[0] != '^') continue;
    auto assign = by_name.find(input.substr(1));
    if (assign == by_name.end() || assign->second->op != "Assign" ||
        assign->second->inputs.empty()) {
      continue;
    }
    const std::string& ref = assign->second->inputs[0];
    targets.push_back({ref.substr(0, ref.find(':')), assign->first});
  }
  return targets;
}

Status Trainer::Initialize(TrainResult& result) {
  const std::vector<InitTarget> targets = InitTargets();
  std::vector<std::string> vars;
  for (const InitTarget& t : targets) vars.push_back(t.variable);
  // A quick look: the barrier answers at once when everything is there.
  constexpr std::chrono::milliseconds kLook(200);
  if (!vars.empty() && client_->WaitInitialized(vars, kLook).ok()) return OkStatus();
  std::vector<std::string> assigns;
  for (const InitTarget& t : targets) {
    if (!client_->WaitInitialized({t.variable}, std::chrono::milliseconds(1)).ok()) {
      assigns.push_back(t.assign);
      result.initialized_variables.push_back(t.variable);
    }
  }
  result.initialized = true;
  if (assigns.size() == targets.size()) {
    result.initialized_variables.clear();  // all of them: the plain init
    return RunIfPresent(sig::kInit, "initializing the variables");
  }
  auto r = client_->Run({}, {}, assigns, {});
  return r.ok() ? OkStatus()
                : r.status().WithContext("initializing the variables no checkpoint restored");
}

Status Trainer::RunIfPresent(const char* node, const char* what) {
  if (!Has(node)) return OkStatus();
  auto r = client_->Run({}, {}, {node}, {});
  return r.ok() ? OkStatus() : r.status().WithContext(what);
}

Status Trainer::WaitForCluster() {
  TFD_ASSIGN_OR_RETURN(const std::vector<TaskStatusInfo> tasks,
                       client_->WaitCluster(options_.init_timeout));
  restored_alone_.clear();
  for (const TaskStatusInfo& t : tasks) {
    if (t.restored_alone) restored_alone_.push_back(t.task);
  }
  return OkStatus();
}

Status Trainer::Prepare(TrainResult& result, bool cluster_waited) {
  if (result.chief) {
    // Every task must be up before deciding what to initialize: a ps that
    // restores its checkpoint on start must not be initialized over.
    if (!cluster_waited) {
      TFD_RETURN_IF_ERROR(WaitForCluster().WithContext("waiting for every task of the cluster"));
    }
    if (Has(sig::kInit)) TFD_RETURN_IF_ERROR(Initialize(result));
    TFD_RETURN_IF_ERROR(RunIfPresent(sig::kChiefInit, "initializing the sync accumulators"));
  } else {
    std::vector<std::string> vars;
    for (const InitTarget& t : InitTargets()) vars.push_back(t.variable);
    if (!vars.empty()) {
      TFD_RETURN_IF_ERROR(client_->WaitInitialized(vars, options_.init_timeout)
                              .WithContext("waiting for the chief to initialize the variables"));
    }
    // Again after a recovery's wait: the chief may have restored the
    // cluster meanwhile, which a stale TaskStatus.restoredAlone would make
    // this worker do again.
    TFD_RETURN_IF_ERROR(WaitForCluster().WithContext("waiting for every task of the cluster"));
  }
  return OkStatus();
}

StatusOr<std::optional<int64_t>> Trainer::RestoreAt(TrainResult& result, int64_t step) {
  if (!options_.restore_checkpoint) return std::optional<int64_t>();
  auto restored = options_.restore_checkpoint(*client_, step);
  if (!restored.ok()) {
    const Code code = restored.status().code();
    if (code == Code::kNotFound || code == Code::kFailedPrecondition) {
      return std::optional<int64_t>();
    }
    return restored.status().WithContext(
        step == Client::kLatestCheckpoint ? std::string("restoring the newest checkpoint")
                                          : "restoring the checkpoint of step " +
                                                std::to_string(step));
  }
  result.restored_steps.push_back(*restored);
  return std::optional<int64_t>(*restored);
}

Status Trainer::PlaceInput(TrainResult& result, int64_t global) {
  if (global <= 0) return RunIfPresent(sig::kResetInput, "resetting this worker's input");
  return RestoreAt(result, global).status();
}

Status Trainer::Recover(TrainResult& result) {
  // A worker waits too: its new session must not reach for a ps that is
  // still restarting.
  Status waited = WaitForCluster();
  // The master answers a cluster that is not whole with DEADLINE_EXCEEDED;
  // UNAVAILABLE is this client's own connection, to a task that died.
  if (waited.code() == Code::kUnavailable && options_.reconnect) {
    auto fresh = options_.reconnect();
    if (!fresh.ok()) return fresh.status().WithContext("connecting again");
    reconnected_ = std::move(fresh).value();
    client_ = reconnected_.get();
    waited = WaitForCluster();
  }
  TFD_RETURN_IF_ERROR(waited.WithContext("waiting for every task of the cluster"));
  TFD_RETURN_IF_ERROR(client_->CreateSession(graph_, options_.step_timeout));
  return Prepare(result, /*cluster_waited=*/true);
}

StatusOr<int64_t> Trainer::ReadGlobalStep() {
  if (!Has(sig::kGlobalStepVariable)) return -1;
  auto read = client_->Run({}, {sig::kGlobalStepVariable}, {}, {});
  if (!read.ok()) return read.status().WithContext("reading the global step");
  return static_cast<int64_t>(ScalarValue(read->fetches[0]));
}

StatusOr<TrainResult> Trainer::Run(
    const std::function<void(const TrainProgress&)>& on_progress) {
  if (!Has(sig::kTrain)) {
    return errors::InvalidArgument("the graph has no '", sig::kTrain,
                                   "' op to run each step (see docs/training.md)");
  }
  TFD_RETURN_IF_ERROR(client_->CreateSession(graph_, options_.step_timeout));
  TrainResult result;
  Status trained = Train(result, on_progress);
  (void)client_->CloseSession();
  if (!trained.ok()) return trained;
  return result;
}

Status Trainer::Train(TrainResult& result,
                      const std::function<void(const TrainProgress&)>& on_progress) {
  result.chief = options_.chief.value_or(IsChief(client_->task(), client_->cluster()));
  bool checkpoints_on = false;  // set before the first step

  int64_t max_steps = options_.max_steps;
  if (max_steps <= 0 && Has(sig::kMaxSteps)) {
    TFD_ASSIGN_OR_RETURN(Tensor t, ConstValue(sig::kMaxSteps));
    max_steps = static_cast<int64_t>(ScalarValue(t));
  }
  double planned_epochs = -1;
  if (Has(sig::kEpochs)) {
    TFD_ASSIGN_OR_RETURN(Tensor t, ConstValue(sig::kEpochs));
    planned_epochs = ScalarValue(t);
  }

  // A sync chief runs its own step (which pushes, aggregates and hands out
  // tokens) instead of the replicas' one.
  const bool sync_chief = result.chief && Has(sig::kChiefStep);
  std::vector<std::string> targets{sync_chief ? sig::kChiefStep : sig::kTrain};
  std::vector<std::string> fetches;
  int global_at = -1, loss_at = -1, epoch_at = -1;
  auto fetch = [&](const char* name, int& at) {
    if (Has(name)) {
      at = static_cast<int>(fetches.size());
      fetches.push_back(name);
    }
  };
  fetch(sync_chief && Has(sig::kChiefGlobalStep) ? sig::kChiefGlobalStep : sig::kGlobalStep,
        global_at);
  // Every summaries/TAG node: loss and epoch among them when the graph has them.
  std::vector<std::pair<std::string, int>> summaries;  // tag, index in fetches
  for (const NodeDef& n : graph_.nodes) {
    if (n.name.rfind(kSummaryPrefix, 0) != 0) continue;
    if (n.name == sig::kLoss) loss_at = static_cast<int>(fetches.size());
    if (n.name == sig::kEpoch) epoch_at = static_cast<int>(fetches.size());
    summaries.emplace_back(n.name.substr(kSummaryPrefix.size()), static_cast<int>(fetches.size()));
    fetches.push_back(n.name);
  }

  TrainProgress& p = result.last;
  auto start = Clock::now();  // of the first step, once there
  auto last_report = start;
  SaveSchedule schedule(options_.checkpoint_every_steps, options_.checkpoint_every_seconds);
  int64_t steps_at_report = 0, global_at_report = -1, checkpoint_step = -1;
  int64_t last_saved = -1;  // by this run
  int failed_in_a_row = 0;
  double epoch_at_report = -1;
  // Saves at the model's step unless saved (or restored) there already. A
  // failed save is told to on_checkpoint_failed and returned, and the
  // schedule moves on all the same: the cluster's newest complete
  // checkpoint is still there, and training goes on.
  auto checkpoint = [&]() -> Status {
    if (!checkpoints_on || p.global_step == checkpoint_step) return OkStatus();
    const int64_t at = p.global_step;
    auto saved = options_.save_checkpoint(*client_);
    if (!saved.ok()) {
      schedule.Tried(at, Clock::now());
      ++result.checkpoint_failures;
      CheckpointFailure failed{
          saved.status().WithContext("checkpoint after step " + std::to_string(at)), at,
          ++failed_in_a_row, last_saved};
      if (options_.on_checkpoint_failed) options_.on_checkpoint_failed(failed);
      return failed.error;
    }
    // The cut may hold a global step other workers moved past this one's
    // last: that is where the model stands, and where a ps restarted from
    // this checkpoint is seen to have gone back from.
    p.global_step = std::max(p.global_step, *saved);
    checkpoint_step = last_saved = p.global_step;
    schedule.Tried(checkpoint_step, Clock::now());
    failed_in_a_row = 0;
    ++result.checkpoints;
    return OkStatus();
  };
  auto report = [&](Clock::time_point now) {
    const double interval = Seconds(now - last_report);
    p.seconds = Seconds(now - start);
    if (interval > 0) p.steps_per_second = (p.local_steps - steps_at_report) / interval;
    p.seconds_left = -1;
    if (interval > 0 && max_steps > 0 && global_at_report >= 0 && p.global_step > global_at_report) {
      const double rate = (p.global_step - global_at_report) / interval;
      p.seconds_left = std::max(0.0, (max_steps - p.global_step) / rate);
    } else if (interval > 0 && planned_epochs > 0 && epoch_at_report >= 0 &&
               p.epoch > epoch_at_report) {
      const double rate = (p.epoch - epoch_at_report) / interval;
      p.seconds_left = std::max(0.0, (planned_epochs - p.epoch) / rate);
    }
    last_report = now;
    steps_at_report = p.local_steps;
    global_at_report = p.global_step;
    epoch_at_report = p.epoch;
    if (on_progress) on_progress(p);
  };

  // After a lost task or a restart, the global step at `global` where this
  // trainer had seen p.global_step. When a task's variables went back
  // alone (a ps restarted from its checkpoint), any trainer, and when the
  // global step went back, the chief, restores the newest checkpoint on
  // every task, so that the other ps tasks and every worker's input go
  // back to the same step as the restarted task; when it stands where it
  // was and a checkpoint of that step exists, the chief restores that one
  // (nothing is lost). p.global_step ends at the model's step.
  //
  // The restarted task saying so is what makes this exact: a chief that
  // lagged (still recovering while another worker stepped the restored ps
  // past where the chief had seen it) would find the global step ahead.
  auto rewind_to_checkpoint = [&](int64_t global) -> Status {
    std::optional<int64_t> restored;
    if (!restored_alone_.empty() || (result.chief && global < p.global_step)) {
      TFD_ASSIGN_OR_RETURN(restored, RestoreAt(result, Client::kLatestCheckpoint));
      restored_alone_.clear();
    } else if (!result.chief) {
      // Its input is put back by the chief's restore.
    } else if (global == p.global_step) {
      TFD_ASSIGN_OR_RETURN(restored, RestoreAt(result, global));
    }
    p.global_step = restored.value_or(global);
    if (restored) {
      checkpoint_step = *restored;
      schedule.CountStepsFrom(*restored);
    }
    return OkStatus();
  };
  // Prepared once on the master; each step then sends no names at all.
  Client::CallableHandle step = 0;
  auto make_callable = [&]() -> Status {
    TFD_ASSIGN_OR_RETURN(step, client_->MakeCallable({}, fetches, targets));
    return OkStatus();
  };
  // Everything between the session and the first step. The global step is
  // read first: it places the input, and a run asked to stop at a step the
  // global step has passed (restored from a checkpoint) must not run one
  // more to find out.
  auto begin = [&]() -> Status {
    checkpoints_on = result.chief && options_.save_checkpoint != nullptr;
    if (checkpoints_on && options_.cluster_keeps_checkpoints) {
      TFD_ASSIGN_OR_RETURN(checkpoints_on, options_.cluster_keeps_checkpoints(*client_));
    }
    TFD_ASSIGN_OR_RETURN(const int64_t start_global, ReadGlobalStep());
    if (!restored_alone_.empty()) {
      // A ps restarted since the cluster's last restore (while this run
      // was starting, or between runs): put the cluster back with it.
      TFD_RETURN_IF_ERROR(rewind_to_checkpoint(start_global));
    } else {
      TFD_RETURN_IF_ERROR(PlaceInput(result, start_global));
      if (start_global >= 0) p.global_step = start_global;
    }
    TFD_RETURN_IF_ERROR(make_callable());
    // A chief that initialized variables starts from a state no checkpoint
    // holds: it saves it first (as TensorFlow's CheckpointSaverHook does),
    // so that a ps dying before the first periodic save restarts from here
    // and every task's input goes back to where this run began with it,
    // instead of the model starting over while the input reads on. A run
    // that starts from restored variables and steps no further saves
    // nothing new.
    if (!result.initialized) {
      checkpoint_step = p.global_step;
      schedule.CountStepsFrom(p.global_step);
      return OkStatus();
    }
    // A failure is reported and does not stop the run: the first periodic
    // save tries again.
    (void)checkpoint();
    return OkStatus();
  };
  // After a failed step: a new session, its callable, and the global step
  // the ps tasks went back to.
  auto resume = [&]() -> Status {
    TFD_RETURN_IF_ERROR(make_callable());
    if (!Has(sig::kGlobalStepVariable)) return OkStatus();
    TFD_ASSIGN_OR_RETURN(const int64_t global, ReadGlobalStep());
    return rewind_to_checkpoint(global);
  };
  // After a task was lost: recovered (the cluster waited for, then `redo`
  // done again), or the error that ends the run.
  auto recover_with = [&](Status lost, const std::function<Status()>& redo) -> Status {
    while (result.recoveries < options_.max_recoveries) {
      ++result.recoveries;
      if (options_.on_recovery) options_.on_recovery(lost, result.recoveries);
      Status s = Recover(result);
      // Past the waits for the cluster (whose deadline ends the run), what
      // is left are runs, recovered from as a step is.
      const bool cluster_back = s.ok();
      if (s.ok()) s = redo();
      if (s.ok()) return OkStatus();
      if (!(cluster_back ? StepRecoverable(s) : Recoverable(s))) {
        return s.WithContext("recovering from: " + lost.ToString());
      }
      lost = s;
    }
    return lost.WithContext("gave up after " + std::to_string(result.recoveries) +
                            " recoveries (--max-recoveries)");
  };
  auto recover = [&](Status lost) { return recover_with(std::move(lost), resume); };

  // A task lost while this trainer starts (a ps restarting under a late
  // worker) is recovered from as during the steps.
  Status started = Prepare(result);
  const bool prepared = started.ok();
  if (prepared) started = begin();
  if (prepared ? StepRecoverable(started) : Recoverable(started)) {
    started = recover_with(std::move(started), begin);
  }
  TFD_RETURN_IF_ERROR(started);
  start = last_report = Clock::now();
  schedule.CountSecondsFrom(start);
  // Summaries: the last step's values (nullopt: not a numeric scalar), and
  // where the previous write left off, for global_step/sec.
  std::vector<std::optional<double>> summary_values(summaries.size());
  int64_t summarized_steps = 0, summarized_global = p.global_step;
  auto summarized_at = start;
  auto summarize = [&](Clock::time_point now) -> Status {
    if (!options_.write_summaries || p.local_steps == summarized_steps) return OkStatus();
    std::vector<std::pair<std::string, double>> scalars;
    for (size_t i = 0; i < summaries.size(); ++i) {
      if (summary_values[i]) scalars.emplace_back(summaries[i].first, *summary_values[i]);
    }
    const double interval = Seconds(now - summarized_at);
    const int64_t moved = p.global_step >= 0 && summarized_global >= 0
                              ? p.global_step - summarized_global
                              : p.local_steps - summarized_steps;
    if (interval > 0) scalars.emplace_back("global_step/sec", moved / interval);
    summarized_steps = p.local_steps;
    summarized_global = p.global_step;
    summarized_at = now;
    return options_.write_summaries(p.global_step >= 0 ? p.global_step : p.local_steps, scalars)
        .WithContext("writing summaries");
  };

  Status failure;
  while (max_steps <= 0 || p.global_step < max_steps) {
    if (options_.stop_requested) {
      result.stopped = options_.stop_requested();
      if (!result.stopped.empty()) break;
    }
    auto out = client_->RunCallable(step, {}, {});
    if (!out.ok()) {
      if (out.status().code() == Code::kOutOfRange) {
        result.stopped = "input exhausted";
        break;
      }
      failure = out.status().WithContext("step " + std::to_string(p.local_steps + 1));
      if (StepRecoverable(out.status())) failure = recover(std::move(failure));
      if (failure.ok()) continue;
      break;
    }
    ++p.local_steps;
    if (global_at >= 0) {
      const auto global = static_cast<int64_t>(ScalarValue(out->fetches[global_at]));
      // A ps restarted between two steps may fail neither: its master
      // registered the step's graph there again and says so. The global
      // step going back is the sign a tfd too old to say gives.
      if (!out->restarted.empty()) failure = WaitForCluster();
      if (failure.ok() && (!restored_alone_.empty() || global < p.global_step)) {
        failure = rewind_to_checkpoint(global);
      } else if (failure.ok()) {
        p.global_step = global;
      }
      if (StepRecoverable(failure)) failure = recover(std::move(failure));
      if (!failure.ok()) break;
    }
    if (loss_at >= 0) {
      const std::optional<double> loss = SummaryScalar(out->fetches[loss_at]);
      p.has_loss = loss.has_value();
      p.loss = loss.value_or(NAN);
    }
    if (epoch_at >= 0) p.epoch = ScalarValue(out->fetches[epoch_at]);
    if (p.local_steps == 1) result.first_loss = p.loss;
    for (size_t i = 0; i < summaries.size(); ++i) {
      summary_values[i] = SummaryScalar(out->fetches[summaries[i].second]);
    }
    const auto now = Clock::now();
    // A save that fails (a task's disk full or read-only, a task down) is
    // reported and tried again at the next interval; it ends nothing and
    // recovers nothing: a task that is down fails the next step, which
    // recovers.
    if (checkpoints_on && schedule.Due(p.global_step, now)) (void)checkpoint();
    if (now - last_report >= options_.progress_every) report(now);
    if (options_.summary_every_steps > 0 && p.local_steps % options_.summary_every_steps == 0) {
      failure = summarize(now);
      if (!failure.ok()) break;
    }
  }
  if (result.stopped.empty() && failure.ok()) {
    result.stopped = "reached step " + std::to_string(max_steps);
  }
  if (result.chief) {
    // Parked sync replicas get a token carrying the final step, and stop.
    Status released = RunIfPresent(sig::kRelease, "releasing the sync replicas");
    if (failure.ok()) failure = released;
  }
  if (!failure.ok()) return failure;
  report(Clock::now());
  TFD_RETURN_IF_ERROR(summarize(Clock::now()));
  // The last save is the one the run's result depends on: one that failed
  // as a lost task fails a step is tried once more after a recovery, and
  // one that still fails ends the run with its error (the steps since the
  // last good checkpoint are not saved).
  Status saved = checkpoint();
  if (StepRecoverable(saved)) {
    saved = recover(std::move(saved));
    if (saved.ok()) saved = checkpoint();
  }
  TFD_RETURN_IF_ERROR(saved.WithContext("the final checkpoint"));
  if (options_.evaluate && Has(sig::kAccuracy)) {
    auto out = client_->Run({}, {sig::kAccuracy}, {}, {});
    if (!out.ok()) return out.status().WithContext("evaluating " + std::string(sig::kAccuracy));
    result.accuracy = ScalarValue(out->fetches[0]);
  }
  return OkStatus();
}

}  // namespace tfd::cli
