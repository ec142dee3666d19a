#include "python/src/monitored.h"

#include <exception>
#include <utility>
#include <vector>

#include <kj/timer.h>
#include <pybind11/stl.h>

#include "daemon/client/training/checkpoint_saver_hook.h"
#include "daemon/client/training/event_file.h"
#include "daemon/client/training/stop_at_step_hook.h"
#include "daemon/client/training/summary_hook.h"
#include "python/src/convert.h"
#include "python/src/errors.h"
#include "python/src/signals.h"

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

}  // namespace

// The Python hooks' callbacks of monitored.h and the exception one raised.
// The runner owns them, not the loop: Python objects go with the GIL held,
// and what lives on the loop may go where there is none (ThreadLoop).
struct MonitoredRunner::PythonCallbacks {
  py::object before_run, after_run;
  py::object on_checkpoint;  // (event, step) -> stop; None without listeners
  std::optional<py::error_already_set> error;
};

namespace {

// The Python side of a step: the fetches, targets and feeds of the user's
// run() (set before each step; the fetches' values kept for the caller,
// owned),
// and the runner's Python callbacks, called with the GIL taken on the
// loop's thread (not at all when None: no Python hook, no GIL per step). A
// Python exception is kept for the caller and ends the loop as a CANCELLED
// step. It only borrows the callbacks: once its runner is gone it is never
// called again, only destroyed.
class PythonHook : public SessionHook {
 public:
  using Callbacks = MonitoredRunner::PythonCallbacks;
  explicit PythonHook(Callbacks& python) : python_(python) {}

  void SetStep(std::vector<std::string> fetches, std::vector<std::string> targets,
               std::vector<std::pair<std::string, Tensor>> feeds) {
    fetches_ = std::move(fetches);
    targets_ = std::move(targets);
    feeds_ = std::move(feeds);
    values_.clear();
  }
  // The user's values after the step; the feeds (views of the caller's
  // arrays) go too, before the caller's arrays may.
  std::vector<Tensor> TakeValues() {
    feeds_.clear();
    return std::exchange(values_, {});
  }

  // Between the slices of the session's waits for the cluster
  // (SessionOptions::stop_requested), on the waiting thread without the
  // GIL: Python runs signal handlers on its main thread only, between
  // bytecodes, so Ctrl-C would otherwise wait for init_timeout. One that
  // raised stops the session, its exception kept for the caller.
  std::string StopIfSignalHandlerRaised() {
    if (signal_raised_) return kSignalRaised;
    auto raised = RaisedBySignalHandlers();
    if (!raised) return "";
    python_.error = std::move(raised);
    signal_raised_ = true;
    return kSignalRaised;
  }
  static constexpr const char* kSignalRaised = "a Python signal handler raised an exception";

  Status BeforeRun(TrainingSession& session, StepArgs& args) override {
    user_indices_.clear();
    for (const std::string& name : fetches_) user_indices_.push_back(args.AddFetch(name));
    for (const std::string& name : targets_) args.AddTarget(name);
    for (const auto& [name, value] : feeds_) TFD_RETURN_IF_ERROR(args.AddFeed(name, value));
    if (python_.before_run.is_none()) return OkStatus();
    py::gil_scoped_acquire gil;
    try {
      const py::object asked = python_.before_run();
      const py::object fetches = asked[py::int_(0)], targets = asked[py::int_(1)];
      indices_.clear();
      for (py::handle name : fetches) indices_.push_back(args.AddFetch(name.cast<std::string>()));
      for (py::handle name : targets) args.AddTarget(name.cast<std::string>());
      for (auto& [name, value] : TensorFeeds(asked[py::int_(3)].cast<PyFeeds>(), false)) {
        TFD_RETURN_IF_ERROR(args.AddFeed(name, std::move(value)));
      }
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
    if (python_.after_run.is_none()) return OkStatus();
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
      if (python_.after_run(arrays).cast<bool>()) session.RequestStop("a hook asked to stop");
    } catch (py::error_already_set& e) {
      return Raised(std::move(e), "after_run");
    } catch (const std::exception& e) {
      return errors::Internal("the Python hooks' after_run returned ", e.what());
    }
    return OkStatus();
  }

  bool has_checkpoint_listeners() const { return !python_.on_checkpoint.is_none(); }
  // Tells the Python checkpoint listeners `event` ("before_save",
  // "after_save", "end") at `step`; true when one asked to stop.
  StatusOr<bool> CheckpointEvent(const char* event, int64_t step) {
    py::gil_scoped_acquire gil;
    try {
      return python_.on_checkpoint(event, step).cast<bool>();
    } catch (py::error_already_set& e) {
      return Raised(std::move(e), event);
    } catch (const std::exception& e) {
      return errors::Internal("the checkpoint listeners' ", event, " returned ", e.what());
    }
  }

 private:
  Status Raised(py::error_already_set e, const char* where) {
    python_.error = std::move(e);
    return errors::Cancelled("a Python hook's ", where, " raised an exception");
  }

  Callbacks& python_;
  bool signal_raised_ = false;  // the session stops, whoever asks next
  std::vector<std::string> fetches_, targets_;  // the user's, of this step
  std::vector<std::pair<std::string, Tensor>> feeds_;  // the user's, viewing their arrays
  std::vector<int> user_indices_;  // in StepValues::fetches, of fetches_
  std::vector<Tensor> values_;     // of fetches_, after the step
  std::vector<int> indices_;       // in StepValues::fetches, of before_run's names
};

}  // namespace

// Everything that lives on the home thread's loop: the client, the hooks
// and the session that borrows them. The home thread's ThreadLoop keeps it,
// and destroys it before the loop.
class MonitoredRunner::Loop : public ThreadLoop::Resident {
 public:
  Loop(MonitoredOptions options, PythonCallbacks& python)
      : options_(std::move(options)), python_(python) {}

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
        options_.summary_steps, [this](int64_t step, const summary::Summary& summaries) {
          return events_ ? events_->Write(step, summaries) : OkStatus();
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
  // While a step runs on this thread's loop, every kSignalPoll: the
  // Python signal handlers due. One that raised has the master close the
  // session, which cancels the step on every task (RunStep then fails
  // CANCELLED); the waits between steps ask through stop_requested.
  kj::Promise<void> WatchSignals(kj::Timer& timer) {
    return timer.afterDelay(kSignalPoll.count() * kj::MILLISECONDS)
        .then([this, &timer]() -> kj::Promise<void> {
          if (python_.StopIfSignalHandlerRaised().empty()) return WatchSignals(timer);
          return session_->client().SendClose();
        });
  }
  // Ends what an Open that failed began: the hooks' End, the session on
  // the master (TrainingSession::Close after any Open).
  void CloseFailed(const Status& s) {
    if (session_) (void)session_->Close(s);
  }
  PythonHook& python() { return python_; }
  int64_t checkpoints() const { return saver_ ? saver_->saved() : 0; }
  ~Loop() override {
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
    if (python_.has_checkpoint_listeners()) {
      o.before_save = [this](int64_t step) {
        return python_.CheckpointEvent("before_save", step).status();
      };
      o.after_save = [this](int64_t step) { return python_.CheckpointEvent("after_save", step); };
      o.end = [this](int64_t step) { return python_.CheckpointEvent("end", step).status(); };
    }
    return o;
  }

  training::SessionOptions SessionOptionsFor(kj::AsyncIoContext& io) {
    training::SessionOptions o;
    o.step_timeout = Millis(options_.step_timeout_s);
    o.init_timeout = Millis(options_.init_timeout_s);
    o.chief = options_.chief;
    o.max_recoveries = options_.max_recoveries;
    o.stop_requested = [this] { return python_.StopIfSignalHandlerRaised(); };
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
  home_->FreeOrphans();  // this thread's runners that other threads dropped since
  job(home_->io());
}

void MonitoredRunner::CheckThread() const {
  ThrowIfError(home_->Check("a MonitoredTrainingSession"));
}

MonitoredRunner::MonitoredRunner(const GraphBuilder& graph, MonitoredOptions options,
                                 py::object before_run, py::object after_run,
                                 py::object on_checkpoint)
    : home_(ThreadLoop::ForThisThread()),
      python_(std::make_unique<PythonCallbacks>(PythonCallbacks{
          std::move(before_run), std::move(after_run), std::move(on_checkpoint), std::nullopt})) {
  GraphDef def = graph.ToGraphDef();
  auto loop = std::make_unique<Loop>(std::move(options), *python_);
  loop_ = loop.get();
  key_ = home_->Keep(std::move(loop));
  Status s;
  OnLoop([&](kj::AsyncIoContext& io) {
    s = loop_->Open(io, std::move(def));
    if (s.ok() && python_->error) s = errors::Cancelled(PythonHook::kSignalRaised);
    if (s.ok()) {
      task_ = loop_->session().client().task();
      chief_ = loop_->session().chief();
      stop_requested_ = loop_->session().stop_requested();
    } else {
      loop_->CloseFailed(s);
    }
  });
  if (!s.ok()) {
    // No destructor runs after a constructor throws: drop the client now.
    std::optional<py::error_already_set> raised = TakeError();
    DropLoop();
    if (raised) throw std::move(*raised);
    ThrowIfError(s);
  }
}

// Dropped unclosed (TF1 programs rarely close): the connection goes without
// a word to the master, which ends the session when it sees it go. No call
// to the task, so that one stopped or gone cannot hold the dropping thread
// (a garbage collection, on any thread); the hooks' End does not run, as
// TF's hooks' end() does not for a session never closed.
MonitoredRunner::~MonitoredRunner() { DropLoop(); }

void MonitoredRunner::DropLoop() {
  if (loop_ == nullptr) return;
  loop_ = nullptr;
  home_->Drop(key_);  // now on the home thread, else by it (ThreadLoop)
}

std::optional<py::error_already_set> MonitoredRunner::TakeError() {
  return std::exchange(python_->error, std::nullopt);
}

py::object MonitoredRunner::Step(std::vector<std::string> fetches, std::vector<std::string> targets,
                                 const PyFeeds& feeds) {
  if (loop_ == nullptr) return py::none();
  // Views of the arrays, which `feeds` keeps alive until the step is done.
  auto tensors = TensorFeeds(feeds, /*local=*/false);
  StatusOr<bool> stepped = false;
  std::vector<Tensor> values;
  OnLoop([&](kj::AsyncIoContext& io) {
    loop_->python().SetStep(std::move(fetches), std::move(targets), std::move(tensors));
    kj::Promise<void> watch =
        loop_->WatchSignals(io.provider->getTimer()).eagerlyEvaluate([](kj::Exception&&) {});
    stepped = loop_->session().RunStep();
    values = loop_->python().TakeValues();
  });
  if (!stepped.ok() || python_->error) {
    // The loop is over: close it (the hooks' End hear the error), then raise.
    const Status failed =
        stepped.ok() ? errors::Cancelled(PythonHook::kSignalRaised) : stepped.status();
    OnLoop([&](kj::AsyncIoContext&) { (void)loop_->session().Close(failed); });
    std::optional<py::error_already_set> raised = TakeError();
    DropLoop();
    if (raised) throw std::move(*raised);
    ThrowIfError(failed);
  }
  stop_requested_ = loop_->session().stop_requested();
  if (!*stepped) return py::none();
  py::list out;
  for (Tensor& t : values) out.append(ValueOrThrow(TensorToNumpy(std::move(t))));
  return out;
}

bool MonitoredRunner::stop_requested() const { return loop_ == nullptr || stop_requested_; }

py::object MonitoredRunner::Close() {
  if (loop_ == nullptr) return py::none();  // a failed step closed it, and said why
  StatusOr<training::SessionResult> closed = Status();
  int64_t checkpoints = 0;
  OnLoop([&](kj::AsyncIoContext&) {
    closed = loop_->session().Close(OkStatus());
    checkpoints = loop_->checkpoints();
  });
  std::optional<py::error_already_set> raised = TakeError();
  DropLoop();  // the connection goes now, not when Python collects this object
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
