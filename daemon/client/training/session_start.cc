// TrainingSession's session creation and recovery: waiting for the
// cluster, the chief's initialization, the init barrier, placing the
// input, and the restores that keep the model and every worker's input at
// the same step (training_session.h).
#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "api/train_signature.h"
#include "common/device_name.h"
#include "daemon/client/training/training_session.h"

namespace tfd::training {

namespace sig = train::signature;

bool Recoverable(const Status& s) {
  return s.code() == Code::kUnavailable || s.code() == Code::kAborted ||
         s.code() == Code::kDeadlineExceeded;
}

bool TrainingSession::Recovers(const Status& s) const {
  return Recoverable(s) && wait_end_ == WaitEnd::kDone;
}

namespace {

using Clock = std::chrono::steady_clock;

// The shortest slice of a wait: the master must have time to ask every task.
constexpr std::chrono::milliseconds kMinWaitSlice{100};

std::string Seconds(std::chrono::milliseconds d) {
  std::ostringstream out;
  out << d.count() / 1000.0 << " s";
  return out.str();
}

}  // namespace

Status TrainingSession::CheckStop(const char* what) {
  std::string why = options_.stop_requested ? options_.stop_requested() : "";
  if (why.empty()) return OkStatus();
  wait_end_ = WaitEnd::kStopped;
  RequestStop(why);
  return errors::Cancelled(why, " while ", what);
}

// Only DEADLINE_EXCEEDED is waited out: a task the master can never reach
// (one that refused its login) fails a slice with its own code, final.
Status TrainingSession::WaitSliced(const char* what,
                                   const std::function<Status(std::chrono::milliseconds)>& slice) {
  wait_end_ = WaitEnd::kDone;
  const Clock::time_point deadline = Clock::now() + options_.init_timeout;
  while (true) {
    TFD_RETURN_IF_ERROR(CheckStop(what));
    const Clock::time_point began = Clock::now();
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - began);
    Status s = slice(std::clamp(left, kMinWaitSlice, kWaitSlice));
    if (s.code() != Code::kDeadlineExceeded) return s;
    // A slice that came back early is not asked again at once.
    std::this_thread::sleep_until(std::min(began + kMinWaitSlice, deadline));
    if (Clock::now() >= deadline) {
      TFD_RETURN_IF_ERROR(CheckStop(what));  // a stop, if any, says why the run ended
      wait_end_ = WaitEnd::kExpired;
      return s.WithContext("not ready within " + Seconds(options_.init_timeout));
    }
  }
}

// A failed attempt that a lost task explains (Recoverable) is tried again;
// any other failure (a login refused) is final.
Status TrainingSession::Reconnect() {
  wait_end_ = WaitEnd::kDone;
  const Clock::time_point deadline = Clock::now() + options_.init_timeout;
  Status last;
  do {
    TFD_RETURN_IF_ERROR(CheckStop("connecting again"));
    auto fresh = options_.reconnect();
    if (fresh.ok()) {
      reconnected_ = std::move(fresh).value();
      client_ = reconnected_.get();
      return OkStatus();
    }
    last = fresh.status();
    if (!Recoverable(last)) return last;
  } while (Clock::now() < deadline);
  wait_end_ = WaitEnd::kExpired;
  return errors::DeadlineExceeded("not back within ", Seconds(options_.init_timeout), ": ",
                                  last.message());
}

bool IsChief(const std::string& task, const ClusterSpec& cluster) {
  const std::string chief = cluster.ChiefTask();
  if (!chief.empty()) return task == chief;
  auto name = DeviceName::Parse(task);
  return name.ok() && name->task.value_or(0) == 0;
}

// What the init op assigns: each variable and its Assign node, found
// through the init op's control inputs and those of the groups (NoOps)
// among them, so that an init made of groups (TF1's Scaffold init_op,
// group(global_variables_initializer(), ...)) is read as well as a flat
// one. The barrier waits for these variables.
std::vector<TrainingSession::InitTarget> TrainingSession::InitTargets() const {
  std::map<std::string, const NodeDef*> by_name;
  for (const NodeDef& n : graph_.nodes) by_name[n.name] = &n;
  std::vector<InitTarget> targets;
  if (by_name.count(sig::kInit) == 0) return targets;
  std::vector<std::string> groups{sig::kInit};
  std::set<std::string> seen{sig::kInit};
  while (!groups.empty()) {
    const NodeDef& group = *by_name.at(groups.back());
    groups.pop_back();
    for (const std::string& input : group.inputs) {
      if (input.empty() || input[0] != '^' || !seen.insert(input.substr(1)).second) continue;
      auto node = by_name.find(input.substr(1));
      if (node == by_name.end()) continue;
      const NodeDef& n = *node->second;
      if (n.op == "NoOp") {
        groups.push_back(n.name);
      } else if (n.op == "Assign" && !n.inputs.empty()) {
        targets.push_back({n.inputs[0].substr(0, n.inputs[0].find(':')), n.name});
      }
    }
  }
  return targets;
}

// The chief's initialization: nothing when every variable is initialized
// (restored by its ps), `init` when none is, else only the Assigns of the
// uninitialized ones, so restored values are never overwritten. Which are
// uninitialized is asked of every task at once: a ps that does not answer
// (stopped, overloaded) fails this, and a recovery follows, rather than
// having its trained variables taken for uninitialized and assigned their
// initial values.
//
// When no variable is initialized, or a task keeps checkpoint files yet
// holds none of its variables initialized, the latest checkpoint is
// restored first, as TF1's SessionManager does before it initializes: the
// tasks restore theirs on start, so this finds one only where a task could
// not (every file damaged, or past its --memory-budget), and then fails
// saying why rather than train (part of) the model afresh and save over
// the checkpoints; or restores it, when the files came after the task
// started.
Status TrainingSession::Initialize(bool may_restore) {
  const std::vector<InitTarget> targets = InitTargets();
  std::vector<std::string> vars;
  for (const InitTarget& t : targets) vars.push_back(t.variable);
  std::set<std::string> uninitialized;
  if (!vars.empty()) {
    auto missing = client_->ReportUninitialized(vars, options_.step_timeout);
    if (!missing.ok()) return missing.status().WithContext("asking which variables to initialize");
    if (missing->empty()) return OkStatus();
    uninitialized.insert(missing->begin(), missing->end());
  }
  if (may_restore && !vars.empty() && options_.restore_checkpoint) {
    bool restore = uninitialized.size() == vars.size();
    if (!restore) {
      TFD_ASSIGN_OR_RETURN(restore, TaskLostItsCheckpoint(vars, uninitialized));
    }
    if (restore) {
      TFD_ASSIGN_OR_RETURN(const std::optional<int64_t> restored,
                           RestoreAt(Client::kLatestCheckpoint));
      if (restored) return Initialize(/*may_restore=*/false);
    }
  }
  std::vector<std::string> assigns;
  for (const InitTarget& t : targets) {
    if (uninitialized.count(t.variable) != 0) {
      assigns.push_back(t.assign);
      result_.initialized_variables.push_back(t.variable);
    }
  }
  result_.initialized = true;
  if (assigns.size() == targets.size()) {
    result_.initialized_variables.clear();  // all of them: the plain init
    return RunIfPresent(sig::kInit, "initializing the variables");
  }
  auto r = client_->Run({}, {}, assigns, {});
  return r.ok() ? OkStatus()
                : r.status().WithContext("initializing the variables no checkpoint restored");
}

namespace {

// "job/task" of a device or task name ("/job:ps/task:1", ".../replica:0/
// task:1/device:CPU:0"); "" when it does not name both.
std::string TaskKey(const std::string& device) {
  auto name = DeviceName::Parse(device);
  if (!name.ok() || !name->job || !name->task) return "";
  return *name->job + "/" + std::to_string(*name->task);
}

}  // namespace

// Whether a task keeps checkpoint files while none of the variables its
// nodes place on it is initialized (a cheap listing, files not read).
StatusOr<bool> TrainingSession::TaskLostItsCheckpoint(const std::vector<std::string>& vars,
                                                      const std::set<std::string>& uninitialized) {
  std::map<std::string, std::string> device_of;
  for (const NodeDef& n : graph_.nodes) device_of[n.name] = n.device;
  std::map<std::string, bool> any_initialized;  // by TaskKey
  for (const std::string& v : vars) {
    const std::string key = TaskKey(device_of[v]);
    if (!key.empty()) any_initialized[key] |= uninitialized.count(v) == 0;
  }
  if (std::none_of(any_initialized.begin(), any_initialized.end(),
                   [](const auto& task) { return !task.second; })) {
    return false;
  }
  auto listed = client_->ListCheckpoints(options_.step_timeout, /*verify=*/false);
  if (listed.status().code() == Code::kFailedPrecondition) return false;  // none keeps any
  if (!listed.ok()) return listed.status().WithContext("asking which tasks keep checkpoints");
  for (const TaskCheckpoints& t : *listed) {
    const auto it = any_initialized.find(TaskKey(t.task));
    if (!t.checkpoints.empty() && it != any_initialized.end() && !it->second) return true;
  }
  return false;
}

Status TrainingSession::RunIfPresent(const char* node, const char* what) {
  if (!Has(node)) return OkStatus();
  auto r = client_->Run({}, {}, {node}, {});
  return r.ok() ? OkStatus() : r.status().WithContext(what);
}

// Waits for every task of the cluster, and notes (restored_alone_) the
// tasks whose variables went back to their own checkpoint when they
// restarted while the other tasks' variables and every worker's input
// stayed where they were (TaskStatus.restoredAlone): whichever trainer
// sees one first restores that checkpoint on every task before it steps
// again, so that no trainer steps ahead on the restored task with input
// the restore would take back, and none waits on another (a chief may
// have finished, or be slow).
Status TrainingSession::WaitForCluster() {
  std::vector<TaskStatusInfo> tasks;
  TFD_RETURN_IF_ERROR(
      WaitSliced("waiting for the cluster", [this, &tasks](std::chrono::milliseconds slice) {
        auto waited = client_->WaitCluster(slice);
        if (waited.ok()) tasks = std::move(waited).value();
        return waited.status();
      }));
  restored_alone_.clear();
  for (const TaskStatusInfo& t : tasks) {
    if (t.restored_alone) restored_alone_.push_back(t.task);
  }
  return OkStatus();
}

Status TrainingSession::Prepare(bool cluster_waited) {
  TFD_RETURN_IF_ERROR(result_.chief ? PrepareChief(cluster_waited) : WaitForChief());
  // Every trainer's own, in every session: TF1's local_init_op (metrics'
  // counts live in local variables).
  return RunIfPresent(sig::kLocalInit, "initializing this trainer's local variables");
}

// A chief whose caller has just waited for the cluster (a recovery) does
// not wait again.
Status TrainingSession::PrepareChief(bool cluster_waited) {
  // Every task must be up before deciding what to initialize: a ps that
  // restores its checkpoint on start must not be initialized over.
  if (!cluster_waited) {
    TFD_RETURN_IF_ERROR(WaitForCluster().WithContext("waiting for every task of the cluster"));
  }
  if (Has(sig::kInit)) TFD_RETURN_IF_ERROR(Initialize(/*may_restore=*/true));
  return RunIfPresent(sig::kChiefInit, "initializing the sync accumulators");
}

Status TrainingSession::WaitForChief() {
  std::vector<std::string> vars;
  for (const InitTarget& t : InitTargets()) vars.push_back(t.variable);
  if (!vars.empty()) {
    TFD_RETURN_IF_ERROR(
        WaitSliced("waiting for the chief", [this, &vars](std::chrono::milliseconds slice) {
          return client_->WaitInitialized(vars, slice);
        }).WithContext("waiting for the chief to initialize the variables"));
  }
  // Again after a recovery's wait: the chief may have restored the cluster
  // meanwhile, which a stale TaskStatus.restoredAlone would make this
  // worker do again.
  return WaitForCluster().WithContext("waiting for every task of the cluster");
}

// Restores checkpoint `step` (kLatestCheckpoint: the newest on every task)
// everywhere; the step restored, or nullopt when there was none (NOT_FOUND)
// or no task keeps checkpoints (FAILED_PRECONDITION). Damaged checkpoints
// (DATA_LOSS) are an error, as TF1's DataLossError: going on without them
// would start the model afresh and save over them.
StatusOr<std::optional<int64_t>> TrainingSession::RestoreAt(int64_t step) {
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
  result_.restored_steps.push_back(*restored);
  return std::optional<int64_t>(*restored);
}

// Where the input starts, given the global step `global` the model is at:
// a new model (0, or a graph without a global step) reads from epoch 0; a
// model at a saved step has that checkpoint restored on every task, so
// each worker's input is where it stood when the model was saved (and
// every ps holds that step's values); otherwise the input stays where it
// stands. Every trainer does this, not only the chief, so that none steps
// with its input where an earlier run left it; a restore by a trainer that
// starts later takes back the steps of one that started sooner together
// with the input they read, so the two stay consistent.
Status TrainingSession::PlaceInput(int64_t global) {
  if (global <= 0) return RunIfPresent(sig::kResetInput, "resetting this worker's input");
  return RestoreAt(global).status();
}

// After a failed step: a new session, prepared as at the start.
Status TrainingSession::Recover() {
  // A worker waits too: its new session must not reach for a ps that is
  // still restarting.
  Status waited = WaitForCluster();
  // The master answers a cluster that is not whole with DEADLINE_EXCEEDED;
  // UNAVAILABLE is this client's own connection, to a task that died.
  if (waited.code() == Code::kUnavailable && options_.reconnect) {
    TFD_RETURN_IF_ERROR(Reconnect().WithContext("connecting again"));
    waited = WaitForCluster();
  }
  TFD_RETURN_IF_ERROR(waited.WithContext("waiting for every task of the cluster"));
  TFD_RETURN_IF_ERROR(client_->CreateSession(graph_, options_.step_timeout));
  ForgetCallables();  // they died with the old session
  return Prepare(/*cluster_waited=*/true);
}

// train/global_step_var, read directly; -1 when the graph has none.
StatusOr<int64_t> TrainingSession::ReadGlobalStep() {
  if (!Has(sig::kGlobalStepVariable)) return -1;
  auto read = client_->Run({}, {sig::kGlobalStepVariable}, {}, {});
  if (!read.ok()) return read.status().WithContext("reading the global step");
  return static_cast<int64_t>(ScalarValue(read->fetches[0]));
}

// After a lost task or a restart, the global step at `global` where this
// trainer had seen global_step(). When a task's variables went back alone
// (a ps restarted from its checkpoint), any trainer, and when the global
// step went back, the chief, restores the newest checkpoint on every task,
// so that the other ps tasks and every worker's input go back to the same
// step as the restarted task; when it stands where it was and a checkpoint
// of that step exists, the chief restores that one (nothing is lost).
//
// The restarted task saying so is what makes this exact: a chief that
// lagged (still recovering while another worker stepped the restored ps
// past where the chief had seen it) would find the global step ahead.
Status TrainingSession::RewindToCheckpoint(int64_t global) {
  std::optional<int64_t> restored;
  if (!restored_alone_.empty() || (result_.chief && global < result_.global_step)) {
    TFD_ASSIGN_OR_RETURN(restored, RestoreAt(Client::kLatestCheckpoint));
    restored_alone_.clear();
  } else if (!result_.chief) {
    // Its input is put back by the chief's restore.
  } else if (global == result_.global_step) {
    TFD_ASSIGN_OR_RETURN(restored, RestoreAt(global));
  }
  result_.global_step = restored.value_or(global);
  if (restored) {
    for (SessionHook* hook : hooks_) hook->AfterRestore(*this, *restored);
  }
  return OkStatus();
}

// Everything between the session and the first step. The global step is
// read first: it places the input, and a run asked to stop at a step the
// global step has passed (restored from a checkpoint) must not run one
// more to find out.
Status TrainingSession::StartSteps() {
  TFD_ASSIGN_OR_RETURN(const int64_t start_global, ReadGlobalStep());
  if (!restored_alone_.empty()) {
    // A ps restarted since the cluster's last restore (while this run was
    // starting, or between runs): put the cluster back with it.
    TFD_RETURN_IF_ERROR(RewindToCheckpoint(start_global));
  } else {
    TFD_RETURN_IF_ERROR(PlaceInput(start_global));
    if (start_global >= 0) result_.global_step = start_global;
  }
  return CallHooks([this](SessionHook& h) { return h.AfterCreateSession(*this); });
}

// A task lost while this trainer starts (a ps restarting under a late
// worker) is recovered from as during the steps.
Status TrainingSession::Start() {
  Status started = Prepare();
  if (started.ok()) started = StartSteps();
  if (Recovers(started)) {
    started = RecoverWith(std::move(started), [this] { return StartSteps(); });
  }
  // A stop while waiting for the cluster: the loop ends before the first step.
  return stopped_waiting() ? OkStatus() : started;
}

// After a failed step: the new session's global step, which the ps tasks
// may have gone back to.
Status TrainingSession::Resume() {
  if (!Has(sig::kGlobalStepVariable)) return OkStatus();
  TFD_ASSIGN_OR_RETURN(const int64_t global, ReadGlobalStep());
  return RewindToCheckpoint(global);
}

// After a task was lost: recovered (the cluster waited for, then `redo`
// done again), or the error that ends the run; OK with stopped_waiting()
// when a stop was requested before or during the recovery.
Status TrainingSession::RecoverWith(Status lost, const std::function<Status()>& redo) {
  while (result_.recoveries < options_.max_recoveries) {
    if (!CheckStop("recovering").ok()) return OkStatus();
    ++result_.recoveries;
    if (options_.on_recovery) options_.on_recovery(lost, result_.recoveries);
    // A run past its deadline here (a ps stopped while the new session is
    // initialized) is recovered from as a step is; a wait for the cluster
    // (or to connect again) past init_timeout ends the run.
    Status s = Recover();
    if (s.ok()) s = redo();
    if (s.ok() || stopped_waiting()) return OkStatus();
    if (!Recovers(s)) {
      return s.WithContext("recovering from: " + lost.ToString());
    }
    lost = s;
  }
  return lost.WithContext("gave up after " + std::to_string(result_.recoveries) +
                          " recoveries (--max-recoveries)");
}

Status TrainingSession::RecoverFrom(Status lost) {
  return RecoverWith(std::move(lost), [this] { return Resume(); });
}

}  // namespace tfd::training
