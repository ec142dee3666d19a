// MonitoredRunner: the C++ training loop (daemon/client/training/
// training_session.h, the one `tfctl train` runs) driven a step at a time
// from Python, for tfd.train.MonitoredTrainingSession. The loop's own hooks
// stop at a step, save the chief's checkpoints and write TensorBoard
// summaries as tfctl's do, and a lost or restarted task is recovered from
// by the same code. What Python adds to a step (the user's fetches, the
// Python hooks' SessionRunArgs) comes in through Step's names and two
// callbacks the loop calls around each step, with the GIL taken (None, the
// default without Python hooks, calls nothing):
//   before_run() -> (fetch names, target names, stop: bool, [(feed name, array)])
//   after_run([numpy array per fetch name]) -> stop: bool
// and one the chief's checkpoint saver calls for TF1's checkpoint listeners
// (training::CheckpointSaverOptions), when not None:
//   on_checkpoint("before_save" | "after_save" | "end", global step) -> stop: bool
// An exception they raise ends the loop and is raised again from Step or
// Close.
//
//   MonitoredRunner r(graph, options, before, after, None);  // connects, initializes
//   while (!r.Step({"loss:0"}, {}).is_none()) {}
//   py::object result = r.Close();
//
// Thread-safety: the Python thread that made it, only (its client lives on
// that thread's ThreadLoop, so a step is no hand-over to another thread,
// as in `tfctl train`); a call from another is FAILED_PRECONDITION, but
// stop_requested and the destructor may be called from any. Step and Close
// run without the GIL, which the Python hooks take. Close drops the
// connection at once. Dropped unclosed, it says nothing to the task (which
// may be stopped or gone) and lets the connection go: at once on the home
// thread; from another, the home thread frees it at its next step or
// session, or at its exit (ThreadLoop::Drop).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

#include "daemon/client/training/training_session.h"
#include "python/src/graph_builder.h"
#include "python/src/session_common.h"
#include "python/src/thread_loop.h"

namespace tfd::python {

struct MonitoredOptions {
  std::string target;  // "host:port"
  std::string token_file;
  TlsFiles tls;
  double timeout_s = 30;        // connecting, and each call but a step
  double step_timeout_s = 60;   // each step
  double init_timeout_s = 120;  // waiting for the cluster, and for the chief's init
  std::optional<bool> chief;    // unset: TensorFlow's rule (training_session.h's IsChief)
  int64_t last_step = 0;        // StopAtStepHook's; 0: the graph's train/max_steps, if any
  int64_t checkpoint_steps = 0;  // 0: none by steps
  double checkpoint_secs = 0;    // 0: none by time
  std::string summary_dir;       // "": no summaries
  int64_t summary_steps = 100;
  int max_recoveries = 10;
};

class MonitoredRunner {
 public:
  MonitoredRunner(const GraphBuilder& graph, MonitoredOptions options, pybind11::object before_run,
                  pybind11::object after_run, pybind11::object on_checkpoint);
  ~MonitoredRunner();

  // Runs one step with `fetches`, `targets` and `feeds` added to it, and
  // returns the fetches' values (numpy arrays, in order); None (running no
  // step) once the loop has ended. A step run again after a recovery is fed
  // the same values.
  pybind11::object Step(std::vector<std::string> fetches, std::vector<std::string> targets,
                        const PyFeeds& feeds);
  // Ends the loop (the chief's final save, the last summaries), closes the
  // session and says how it went: a dict of local_steps, global_step,
  // stopped, recoveries, restored_steps, chief, checkpoints; None when a failed Step has
  // closed it already.
  pybind11::object Close();
  // Whether the loop has ended or will end before the next step: as the
  // last step (or Close) left it.
  bool stop_requested() const;
  // FAILED_PRECONDITION on another thread than the one that made it, which
  // alone may step or close it.
  void CheckThread() const;
  const std::string& task() const { return task_; }
  // Whether this worker is the chief (decided when the session opened).
  bool chief() const { return chief_; }

  // The Python hooks' callbacks (monitored.cc).
  struct PythonCallbacks;

 private:
  class Loop;
  // Lets the loop's objects go (ThreadLoop::Drop); once.
  void DropLoop();
  // The exception a Python hook raised, once.
  std::optional<pybind11::error_already_set> TakeError();

  // Runs `job` on the home thread's loop without the GIL; raises when
  // called from another thread.
  template <typename Job>
  void OnLoop(Job&& job);

  std::shared_ptr<ThreadLoop> home_;
  // The GIL's: goes with this object, on whichever thread drops it.
  std::unique_ptr<PythonCallbacks> python_;
  // Kept on home_'s loop under key_ (null once dropped: the loop has
  // ended); used on home_'s thread only.
  Loop* loop_ = nullptr;
  ThreadLoop::Key key_ = 0;
  std::string task_;
  bool chief_ = false;
  bool stop_requested_ = false;  // the session's, after the last step
};

}  // namespace tfd::python
