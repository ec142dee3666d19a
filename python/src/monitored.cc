#include "python/src/monitored.h"

#include <exception>
#include <utility>
#include <vector>

#include <pybind11/stl.h>

#include "daemon/client/training/event_file.h"
#include "daemon/client/training/checkpoint_saver_hook.h"
#include "daemon/client/training/stop_at_step_hook.h"
#include "daemon/client/training/summary_hook.h"
#include "python/src/convert.h"
#include "python/src/errors.h"

namespace tfd::python {

namespace py = pybind11;
using training::SessionHook;
using training::StepArgs;
using training::StepValues;
using training::TrainingSession;

namespace {

// The step a save or restore reached, from the tasks' answer.
StatusOr<int64_t> StepOf(const std::vector<TaskCheckpoints>& tasks, const char* done) {
  for (const TaskCheckpoints& task : tasks) {
    if (!task.checkpoints.empty()) return task.checkpoints.front().step;
  }
  return errors::NotFound("no task ", done, " a checkpoint");
}

// The Python side of a step: the fetches and targets of the user's run()
// (names, set before each step; their values kept for the caller, owned),
// and the Python hooks' callbacks of monitored.h, called with the GIL taken
// on the loop's thread (not at all when None: no Python hook, no GIL per
// step). A Python exception is kept for the caller and ends the loop as a
// CANCELLED step.
class PythonHook : public SessionHook {
 public:
  PythonHook(py::object before_run, py::object after_run)
      : before_run_(std::move(before_run)), after_run_(std::move(after_run)) {}
  ~PythonHook() override {
    if (released_) return;
    py::gil_scoped_acquire gil;
    ReleasePython();
  }

  // Lets go of the Python objects, with the GIL held: what is left may then
  // go on a thread that cannot take it (one that is ending).
  void ReleasePython() {
    error_.reset();
    before_run_ = py::none();
    after_run_ = py::none();
    released_ = true;
  }

  void SetStep(std::vector<std::string> fetches, std::vector<std::string> targets) {
    fetches_ = std::move(fetches);
    targets_ = std::move(targets);
    values_.clear();
  }
  std::vector<Tensor> TakeValues() { return std::exchange(values_, {}); }

  Status BeforeRun(TrainingSession& session, StepArgs& args) override {
    user_indices_.clear();
    for (const std::string& name : fetches_) user_indices_.push_back(args.AddFetch(name));
    for (const std::string& name : targets_) args.AddTarget(name);
    if (before_run_.is_none()) return OkStatus();
    py::gil_scoped_acquire gil;
    try {
      const py::object asked = before_run_();
      const py::object fetches = asked[py::int_(0)], targets = asked[py::int_(1)];
      indices_.clear();
      for (py::handle name : fetches) indices_.push_back(args.AddFetch(name.cast<std::string>()));
      for (py::handle name : targets) args.AddTarget(name.cast<std::string>());
      if (asked[py::int_(2)].cast<bool>()) session.RequestStop("a hook asked to stop");
    } catch (py::error_already_set& e) {
      return Raised(std::move(e), "before_run");
    } catch (const std::exception& e) {  // a cast of what it returned
      return errors::Internal("the Python hooks' before_run returned ", e.what());
    }
    return OkStatus();
  }

  Status AfterRun(TrainingSession& session, const StepValues& values) override {
    values_.clear();
    for (int i : user_indices_) values_.push_back(values.fetches[i]);
    TFD_RETURN_IF_ERROR(OwnTensors(values_));
    if (after_run_.is_none()) return OkStatus();
    std::vector<Tensor> mine;
    for (int i : indices_) mine.push_back(values.fetches[i]);
    TFD_RETURN_IF_ERROR(OwnTensors(mine));
    py::gil_scoped_acquire gil;
    try {
      py::list arrays;
      for (Tensor& t : mine) {
        auto array = TensorToNumpy(std::move(t));
        if (!array.ok()) return array.status();
        arrays.append(*array);
      }
      if (after_run_(arrays).cast<bool>()) session.RequestStop("a hook asked to stop");
    } catch (py::error_already_set& e) {
      return Raised(std::move(e), "after_run");
    } catch (const std::exception& e) {
      return errors::Internal("the Python hooks' after_run returned ", e.what());
    }
    return OkStatus();
  }

  // The exception a callback raised, once.
  std::optional<py::error_already_set> TakeError() { return std::exchange(error_, std::nullopt); }

 private:
  Status Raised(py::error_already_set e, const char* where) {
    error_ = std::move(e);
    return errors::Cancelled("a Python hook's ", where, " raised an exception");
  }

  py::object before_run_, after_run_;
  std::vector<std::string> fetches_, targets_;  // the user's, of this step
  std::vector<int> user_indices_;  // in StepValues::fetches, of fetches_
  std::vector<Tensor> values_;     // of fetches_, after the step
  std::vector<int> indices_;       // in StepValues::fetches, of before_run's names
  std::optional<py::error_already_set> error_;
  bool released_ = false;
};

}  // namespace

// Everything that lives on the home thread's loop: the client, the hooks
// and the session that borrows them, and the loop itself, which goes last.
class MonitoredRunner::Loop {
 public:
  Loop(std::shared_ptr<ThreadLoop> home, MonitoredOptions options, py::object before_run,
       py::object after_run)
      : home_(std::move(home)),
        options_(std::move(options)),
        python_(std::move(before_run), std::move(after_run)) {}

  Status Open(kj::AsyncIoContext& io, GraphDef graph) {
    const auto timeout = Millis(options_.timeout_s);
    TFD_ASSIGN_OR_RETURN(client_, ConnectClient(io, options_.target, options_.token_file,
                                                options_.tls, timeout));
    if (!options_.summary_dir.empty()) {
      TFD_ASSIGN_OR_RETURN(events_, training::EventFileWriter::Create(options_.summary_dir));
    }
    TFD_ASSIGN_OR_RETURN(const int64_t last, training::LastStep(graph, options_.last_step));
    stop_ = std::make_unique<training::StopAtStepHook>(last);
    summaries_ = std::make_unique<training::SummaryHook>(training::SummaryOptions{
        options_.summary_steps,
        [this](int64_t step, const std::vector<std::pair<std::string, double>>& scalars) {
          return events_ ? events_->WriteScalars(step, scalars) : OkStatus();
        }});
    saver_ = std::make_unique<training::CheckpointSaverHook>(SaverOptions());
    std::vector<SessionHook*> hooks{stop_.get(), &python_};
    if (events_) hooks.push_back(summaries_.get());
    hooks.push_back(saver_.get());
    session_ = std::make_unique<TrainingSession>(*client_, std::move(graph),
                                                 SessionOptionsFor(io), std::move(hooks));
    return session_->Open();
  }

  TrainingSession& session() { return *session_; }
  // Ends what an Open that failed began: the hooks' End, the session on
  // the master (TrainingSession::Close after any Open).
  void CloseFailed(const Status& s) {
    if (session_) (void)session_->Close(s);
  }
  PythonHook& python() { return python_; }
  int64_t checkpoints() const { return saver_ ? saver_->saved() : 0; }
  ~Loop() {
    session_.reset();
    client_.reset();
  }

 private:
  training::CheckpointSaverOptions SaverOptions() {
    const auto timeout = Millis(options_.timeout_s);
    training::CheckpointSaverOptions o;
    o.every_steps = options_.checkpoint_steps;
    o.every_seconds = options_.checkpoint_secs;
    if (o.every_steps > 0 || o.every_seconds > 0) {
      o.save = [timeout](Client& client) -> StatusOr<int64_t> {
        TFD_ASSIGN_OR_RETURN(auto tasks, client.SaveCheckpoint(std::nullopt, timeout));
        return StepOf(tasks, "saved");
      };
    }
    return o;
  }

  training::SessionOptions SessionOptionsFor(kj::AsyncIoContext& io) {
    training::SessionOptions o;
    o.step_timeout = Millis(options_.step_timeout_s);
    o.init_timeout = Millis(options_.init_timeout_s);
    o.chief = options_.chief;
    o.max_recoveries = options_.max_recoveries;
    const auto timeout = Millis(options_.timeout_s);
    o.restore_checkpoint = [timeout](Client& client, int64_t step) -> StatusOr<int64_t> {
      TFD_ASSIGN_OR_RETURN(auto tasks, client.RestoreCheckpoint(step, timeout));
      return StepOf(tasks, "restored");
    };
    // The task itself died: wait for whoever restarts it as long as for
    // the rest of the cluster, as tfctl train does.
    o.reconnect = [this, &io]() {
      return ConnectClient(io, options_.target, options_.token_file, options_.tls,
                           Millis(options_.init_timeout_s));
    };
    return o;
  }

  std::shared_ptr<ThreadLoop> home_;
  MonitoredOptions options_;
  PythonHook python_;
  std::unique_ptr<Client> client_;
  std::unique_ptr<training::EventFileWriter> events_;
  std::unique_ptr<training::StopAtStepHook> stop_;
  std::unique_ptr<training::SummaryHook> summaries_;
  std::unique_ptr<training::CheckpointSaverHook> saver_;
  std::unique_ptr<TrainingSession> session_;
};

template <typename Job>
void MonitoredRunner::OnLoop(Job&& job) {
  CheckThread();
  py::gil_scoped_release release;
  job(home_->io());
}

void MonitoredRunner::CheckThread() const {
  ThrowIfError(home_->Check("a MonitoredTrainingSession"));
}

MonitoredRunner::MonitoredRunner(const GraphBuilder& graph, MonitoredOptions options,
                                 py::object before_run, py::object after_run)
    : home_(ThreadLoop::ForThisThread()),
      loop_(std::make_unique<Loop>(home_, std::move(options), std::move(before_run),
                                   std::move(after_run))) {
  GraphDef def = graph.ToGraphDef();
  Status s;
  OnLoop([&](kj::AsyncIoContext& io) {
    s = loop_->Open(io, std::move(def));
    if (s.ok()) {
      task_ = loop_->session().client().task();
      chief_ = loop_->session().chief();
    } else {
      loop_->CloseFailed(s);
    }
  });
  if (!s.ok()) {
    // No destructor runs after a constructor throws: drop the client now.
    std::optional<py::error_already_set> raised = loop_->python().TakeError();
    loop_.reset();
    ended_ = true;
    if (raised) throw std::move(*raised);
    ThrowIfError(s);
  }
}

MonitoredRunner::~MonitoredRunner() {
  if (!home_->OnHomeThread()) {
    // Dropped by another thread (a garbage collection there): the client
    // and the thread's event loop belong to the home thread, which alone
    // may run or destroy them, and which may have ended (then this holds
    // the loop's last reference, closed or not). Kept for good rather than
    // torn down here.
    // TODO(cleanup): hand them to the home thread to close and free.
    (void)loop_.release();
    (void)std::make_unique<std::shared_ptr<ThreadLoop>>(std::move(home_)).release();
    return;
  }
  if (!loop_) return;
  py::gil_scoped_release release;
  if (!ended_) (void)loop_->session().Close(errors::Cancelled("the session was dropped"));
  loop_.reset();
}

void MonitoredRunner::Throw(const Status& s) {
  if (auto raised = loop_->python().TakeError()) throw std::move(*raised);
  ThrowIfError(s);
}

py::object MonitoredRunner::Step(std::vector<std::string> fetches,
                                 std::vector<std::string> targets) {
  if (ended_) return py::none();
  StatusOr<bool> stepped = false;
  std::vector<Tensor> values;
  OnLoop([&](kj::AsyncIoContext&) {
    loop_->python().SetStep(std::move(fetches), std::move(targets));
    stepped = loop_->session().RunStep();
    values = loop_->python().TakeValues();
  });
  if (!stepped.ok()) {
    // The loop is over: close it (the hooks' End hear the error), then raise.
    const Status failed = stepped.status();
    OnLoop([&](kj::AsyncIoContext&) { (void)loop_->session().Close(failed); });
    ended_ = true;
    std::optional<py::error_already_set> raised = loop_->python().TakeError();
    Drop();
    if (raised) throw std::move(*raised);
    ThrowIfError(failed);
  }
  if (!*stepped) return py::none();
  py::list out;
  for (Tensor& t : values) out.append(ValueOrThrow(TensorToNumpy(std::move(t))));
  return out;
}

bool MonitoredRunner::stop_requested() {
  return ended_ || loop_->session().stop_requested();
}

void MonitoredRunner::Drop() {
  py::gil_scoped_release release;  // the hooks' Python objects take it
  loop_.reset();
}

py::object MonitoredRunner::Close() {
  if (ended_) return py::none();  // a failed step closed it, and said why
  StatusOr<training::SessionResult> closed = Status();
  OnLoop([&](kj::AsyncIoContext&) { closed = loop_->session().Close(OkStatus()); });
  ended_ = true;
  const int64_t checkpoints = loop_->checkpoints();
  std::optional<py::error_already_set> raised = loop_->python().TakeError();
  Drop();  // the connection goes now, not when Python collects this object
  if (raised) throw std::move(*raised);
  ThrowIfError(closed.status());
  py::dict out;
  out["local_steps"] = closed->local_steps;
  out["global_step"] = closed->global_step;
  out["stopped"] = closed->stopped;
  out["recoveries"] = closed->recoveries;
  out["restored_steps"] = py::cast(closed->restored_steps);
  out["chief"] = closed->chief;
  out["checkpoints"] = checkpoints;
  return out;
}

}  // namespace tfd::python
