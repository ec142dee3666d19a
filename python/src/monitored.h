// MonitoredRunner: the C++ training loop (daemon/client/training/
// training_session.h, the one `tfctl train` runs) driven a step at a time
// from Python, for tfd.train.MonitoredTrainingSession. The loop's own hooks
// stop at a step, save the chief's checkpoints and write TensorBoard
// summaries as tfctl's do, and a lost or restarted task is recovered from
// by the same code. What Python adds to a step (the user's fetches, the
// Python hooks' SessionRunArgs) comes in through Step's names and two
// callbacks the loop calls around each step, on its own thread with the GIL
// taken (None, the default without Python hooks, calls nothing):
//   before_run() -> (fetch names, target names, stop: bool)
//   after_run([numpy array per fetch name]) -> stop: bool
// An exception they raise ends the loop and is raised again from Step or
// Close.
//
//   MonitoredRunner r(graph, options, before, after);  // connects, initializes
//   while (!r.Step({"loss:0"}, {}).is_none()) {}
//   py::object result = r.Close();
//
// Thread-safety: one Python thread at a time; Step and Close wait without
// the GIL while the loop's thread (the client's) steps.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

#include "daemon/client/training/training_session.h"
#include "python/src/graph_builder.h"
#include "python/src/sessions.h"

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
  MonitoredRunner(const GraphBuilder& graph, MonitoredOptions options,
                  pybind11::object before_run, pybind11::object after_run);
  ~MonitoredRunner();

  // Runs one step with `fetches` and `targets` added to it, and returns
  // the fetches' values (numpy arrays, in order); None (running no step)
  // once the loop has ended.
  pybind11::object Step(std::vector<std::string> fetches, std::vector<std::string> targets);
  // Ends the loop (the chief's final save, the last summaries), closes the
  // session and says how it went: a dict of local_steps, global_step,
  // stopped, recoveries, restored_steps, chief, checkpoints; None when a failed Step has
  // closed it already.
  pybind11::object Close();
  bool stop_requested();
  const std::string& task() const { return task_; }
  // Whether this worker is the chief (decided when the session opened).
  bool chief() const { return chief_; }

 private:
  class Loop;
  void Throw(const Status& s);

  std::unique_ptr<Loop> loop_;  // used on thread_'s thread only
  std::string task_;
  bool chief_ = false;
  bool ended_ = false;
  LoopThread thread_;  // ~MonitoredRunner drops loop_ on it first
};

}  // namespace tfd::python
