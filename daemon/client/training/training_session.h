// TrainingSession: the between-graph training loop of one worker, in the
// shape of TensorFlow's MonitoredTrainingSession: it creates a session
// (and recovers it), steps, and leaves checkpoints, progress, summaries and
// when to stop to the hooks it is given (session_hook.h). `tfctl train`,
// train_bench and the Python package drive it; the graph speaks the names
// of api/train_signature.h.
//
//   CheckpointSaverHook saver(...);
//   StopAtStepHook stop(1000);
//   TrainingSession session(*client, graph, options, {&stop, &saver});
//   TFD_ASSIGN_OR_RETURN(SessionResult r, session.Run());
//
// Session creation. The chief (chief:0 if the cluster has a chief job,
// else worker:0, unless told otherwise) waits for the whole cluster, then
// initializes the global variables that are not initialized already
// (restored from a checkpoint by their ps tasks: those keep their values),
// and runs the sync-replica chief init; every other worker waits on the
// cluster's init barrier for those same variables. Every worker then reads
// the global step and places its input: a new model (global step 0, or no
// global step) resets the input to epoch 0; a model at a saved step has
// that checkpoint restored on every task, so each worker's input is where
// it stood when the model was saved.
//
// Steps. Each step runs kTrain (a sync chief: kChiefStep) with what the
// hooks add, and fetches the global step (kGlobalStep, a sync chief's
// kChiefGlobalStep), which the hooks see as global_step(). The loop ends
// when a hook requests a stop, when the input ends (OUT_OF_RANGE), or on
// an error. The chief then releases parked sync replicas.
//
// Recovery. A step (or anything between the session and the first step)
// that fails with UNAVAILABLE or ABORTED (a task died, or a restarted one
// lost the step's state), or past its deadline, is recovered from as
// MonitoredTrainingSession does: connect again if the client's own task is
// the one that went, wait for every task again, open a new session (the
// old one's partitions died with the task), let the chief initialize what
// no checkpoint restored, and go on from the global step the ps tasks
// hold. The input is not reset: each worker goes on from where its input
// stands, unless the model went back: when a task's variables went back
// alone (a ps restarted from its own checkpoint: TaskStatus.restoredAlone),
// any worker, and when the global step went back, the chief, restores the
// newest checkpoint on every task, so the other ps tasks and every
// worker's input go back to the same step (docs/training.md, "When a task
// dies"). Hooks hear of it through AfterRestore.
//
// Waits. Each wait for the cluster (its tasks, the init barrier, connecting
// again to the client's own task) lasts at most init_timeout; one that
// passes it ends the run with its error, however many recoveries are
// left. A wait runs in slices of at most kWaitSlice and polls
// SessionOptions::stop_requested between them: a stop requested while the
// session starts or recovers ends the run as a stop between steps does,
// with nothing saved or evaluated (no session is ready: stopped_waiting).
//
// Thread-safety: one thread, the one that owns the Client.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "common/graph_def.h"
#include "daemon/client/client.h"
#include "daemon/client/training/session_hook.h"

namespace tfd::training {

struct SessionOptions {
  std::chrono::milliseconds step_timeout{60000};  // the session's deadline per step
  std::optional<bool> chief;                       // unset: IsChief
  std::chrono::milliseconds init_timeout{120000};  // cluster and init barriers
  // Failed steps recovered from before the error ends the run; each
  // recovery waits at most init_timeout for the cluster.
  int max_recoveries = 10;
  // Told before each recovery why, and which one it is (1, 2...).
  std::function<void(const Status& why, int recovery)> on_recovery;
  // When set, a recovery that finds its own connection lost (the client's
  // task died; a supervisor may be restarting it) connects again with it:
  // one attempt per call, which the session repeats until one succeeds or
  // init_timeout passes (then the run ends, as after any wait for the
  // cluster that passes it). A short attempt (tfctl's: 1 s) lets a stop
  // request be noticed between two.
  std::function<StatusOr<std::unique_ptr<Client>>()> reconnect;
  // Polled between the slices (at most kWaitSlice each) of every wait for
  // the cluster, the init barrier or a reconnect, and before each
  // recovery: an answer other than "" ends the run at once as a stop with
  // that reason (SessionResult::stopped), as StopRequestHook does between
  // steps. Unset: waits run to their end.
  std::function<std::string()> stop_requested;
  // Restores a checkpoint of the cluster on every task that keeps them (the
  // variables and each dataset's input position): the one of `step`, or
  // with Client::kLatestCheckpoint the newest every task holds; returns the
  // step restored. Called when the model is at, or went back to, a saved
  // step; NOT_FOUND or FAILED_PRECONDITION (no such checkpoint everywhere,
  // no task keeping any) only skip it. Unset: nothing is restored.
  std::function<StatusOr<int64_t>(Client& client, int64_t step)> restore_checkpoint;
};

struct SessionResult {
  int64_t local_steps = 0;   // steps this worker ran
  int64_t global_step = -1;  // where the model stands; -1 when the graph does not say
  std::string stopped;       // why: what the hook said, or "input exhausted"
  int recoveries = 0;        // failed steps recovered from
  // Checkpoints restored on every task (at the start; after a recovery),
  // by step: the model and its input went back together.
  std::vector<int64_t> restored_steps;
  bool chief = false;
  bool initialized = false;  // this worker ran the initializer (or part of it)
  std::vector<std::string> initialized_variables;  // which, when only some were
};

class TrainingSession {
 public:
  // `hooks` are borrowed and must outlive Run.
  TrainingSession(Client& client, GraphDef graph, SessionOptions options,
                  std::vector<SessionHook*> hooks);

  // Opens a session on the client's task, trains until a hook or the input
  // stops it, and closes the session. INVALID_ARGUMENT when the graph has
  // no kTrain.
  StatusOr<SessionResult> Run();

  // Run, a step at a time, for a caller that owns the loop (the Python
  // package's MonitoredTrainingSession, whose user calls run() per step):
  // Open does what Run does before the first step; each RunStep runs one
  // step as Run does (recovering from a lost task and running the step
  // again), and returns false, running none, once a hook or the input's
  // end stopped the loop; Close(the first error, or OK) does what Run does
  // after the last step and returns what Run returns. Run is exactly
  //   Status s = Open(); while (s.ok() && RunStep() is true) {} return Close(s);
  // Close must follow an Open, whatever it returned.
  Status Open();
  StatusOr<bool> RunStep();
  StatusOr<SessionResult> Close(Status status);

  // For hooks.
  // The client in use: the one given, or the one a recovery connected.
  Client& client() { return *client_; }
  const GraphDef& graph() const { return graph_; }
  bool Has(const char* node) const;
  // A Const node's value (INVALID_ARGUMENT when `node` is not a Const).
  StatusOr<Tensor> ConstValue(const char* node) const;
  bool chief() const { return result_.chief; }
  bool initialized() const { return result_.initialized; }
  int64_t local_steps() const { return result_.local_steps; }
  int64_t global_step() const { return result_.global_step; }
  // A checkpoint saved at `step`: the model stands there at least (other
  // workers may have moved the global step past this one's last look).
  void NoteGlobalStep(int64_t step) { result_.global_step = std::max(result_.global_step, step); }
  // Ends the loop before the next step; the first reason given is kept.
  void RequestStop(std::string why);
  bool stop_requested() const { return !result_.stopped.empty(); }
  // When the first step was sent, its callable prepared (nullopt before):
  // where a rate's seconds count from, as the old loop counted them.
  const std::optional<std::chrono::steady_clock::time_point>& steps_began() const {
    return steps_began_;
  }
  // A stop request (SessionOptions::stop_requested) ended a wait for the
  // cluster while the session started or recovered: no session is ready
  // for steps and the cluster may not be whole, so hooks save and evaluate
  // nothing at End.
  bool stopped_waiting() const { return wait_end_ == WaitEnd::kStopped; }
  // After `lost` (a call that failed as a lost task fails a step: see
  // Recoverable) outside a step: recovers as from a failed step, or
  // returns the error that ends the run. OK too when a stop request ended
  // the recovery (stopped_waiting()).
  Status RecoverFrom(Status lost);

 private:
  struct InitTarget {
    std::string variable, assign;
  };
  std::vector<InitTarget> InitTargets() const;
  Status Initialize(bool may_restore);
  StatusOr<bool> TaskLostItsCheckpoint(const std::vector<std::string>& vars,
                                       const std::set<std::string>& uninitialized);
  Status RunIfPresent(const char* node, const char* what);
  // How the last wait for the cluster (its tasks, the chief's variables, a
  // reconnect to the client's own task) ended, for Recovers.
  enum class WaitEnd {
    kDone,     // it got what it waited for, or failed otherwise (judged as a step's failure)
    kExpired,  // init_timeout passed: the cluster did not come back, the run ends
    kStopped,  // a stop was requested: the run ends as a stop
  };
  // Notes a stop request, if any: then kStopped, the stop requested, and
  // CANCELLED (which Start and RecoverWith turn into the stop).
  Status CheckStop(const char* what);
  // Runs `slice` (a wait given at most kWaitSlice) again and again until it
  // returns other than DEADLINE_EXCEEDED (kDone), init_timeout passes
  // (kExpired), or a stop is requested between two (kStopped).
  Status WaitSliced(const char* what,
                    const std::function<Status(std::chrono::milliseconds)>& slice);
  // options_.reconnect, attempt after attempt, for at most init_timeout.
  Status Reconnect();
  // Whether a failure while starting or recovering is recovered from:
  // Recoverable, unless a wait for the cluster ended the run (it passed
  // init_timeout, or a stop was requested).
  bool Recovers(const Status& s) const;
  Status WaitForCluster();
  // A new session made ready to step: the chief initializes (or restores)
  // the variables, a worker waits for it; then kLocalInit.
  Status Prepare(bool cluster_waited = false);
  Status PrepareChief(bool cluster_waited);
  Status WaitForChief();
  Status Recover();
  Status PlaceInput(int64_t global);
  StatusOr<std::optional<int64_t>> RestoreAt(int64_t step);
  Status RewindToCheckpoint(int64_t global);
  StatusOr<int64_t> ReadGlobalStep();
  Status Start();
  Status StartSteps();
  Status Resume();
  Status RecoverWith(Status lost, const std::function<Status()>& redo);
  Status AfterStep(const Client::RunOutput& out);
  StatusOr<Client::CallableHandle> CallableFor(const StepArgs& args);
  void ForgetCallables();
  Status CallHooks(const std::function<Status(SessionHook&)>& call);

  Client* client_;
  std::unique_ptr<Client> reconnected_;  // owns *client_ after a reconnect
  GraphDef graph_;
  SessionOptions options_;
  std::vector<SessionHook*> hooks_;
  SessionResult result_;
  bool began_ = false;    // the hooks' Begin ran: End runs at Close
  bool created_ = false;  // a session is open on the master
  bool started_ = false;  // it was prepared for steps: the chief releases replicas at Close
  WaitEnd wait_end_ = WaitEnd::kDone;  // how the last wait for the cluster ended
  std::string step_op_;      // kTrain, or a sync chief's kChiefStep
  std::string global_step_;  // the global step fetched each step; empty: none
  std::vector<std::string> restored_alone_;  // at the last look; cleared by a restore
  std::optional<std::chrono::steady_clock::time_point> steps_began_;
  // Callables of this session, by their feeds, fetches and targets.
  using CallableKey =
      std::tuple<std::vector<std::string>, std::vector<std::string>, std::vector<std::string>>;
  std::map<CallableKey, Client::CallableHandle> callables_;
  const std::pair<const CallableKey, Client::CallableHandle>* last_callable_ = nullptr;
};

// What a step, or any call a trainer makes, fails with when a task died,
// was restarted or stopped answering under it: worth a new session once
// the cluster is whole again (MonitoredSession's AbortedError and
// UnavailableError, and a deadline passed: a task stopped by SIGSTOP or
// cut off by a dropped link keeps its connection open). The session's own
// waits for the cluster are the exception (TrainingSession::Recovers).
bool Recoverable(const Status& s);

// The longest a wait for the cluster runs without looking for a stop
// request (SessionOptions::stop_requested).
inline constexpr std::chrono::milliseconds kWaitSlice{1000};

// Whether `task` ("/job:worker/replica:0/task:0") is the chief of `cluster`
// by TensorFlow's rule (ClusterSpec::ChiefTask); in a cluster with neither
// a chief nor a worker job, task 0 of any job.
bool IsChief(const std::string& task, const ClusterSpec& cluster);

}  // namespace tfd::training
