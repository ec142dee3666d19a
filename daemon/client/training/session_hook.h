// SessionHook: what a TrainingSession (training_session.h) calls around
// its steps, in the shape of TensorFlow's SessionRunHook, so that
// checkpoints, progress, summaries and stopping are each a hook of their
// own and a new one needs no change to the loop.
//
//   class CountSteps : public SessionHook {
//    public:
//     Status AfterRun(TrainingSession&, const StepValues&) override { ++steps; return OkStatus(); }
//     int64_t steps = 0;
//   };
//
// The calls, for each hook in the order the session was given them:
//   Begin               once, before the first session is created;
//   AfterCreateSession  when the session is ready for its first step (the
//                       cluster up, the variables initialized, the input
//                       placed); again if a recovery redid that start, but
//                       not after a recovery between steps;
//   BeforeRun           before each step: may add fetches and targets to
//                       it (StepArgs), or request a stop, in which case the
//                       step does not run;
//   AfterRun            after each step that succeeded, with its fetches;
//                       may request a stop (the loop ends before the next);
//   AfterRestore        when the session put the model back to a
//                       checkpoint after a restart or a recovery;
//   End                 once, last, with how the loop ended (OK after a
//                       stop or the input's end; the error otherwise).
// An error from any call but End ends the loop with that error; End is
// still called, with it, unless the error came from Begin (no session was
// created). Each End sees the first error, an earlier hook's End's included.
//
// Thread-safety: called on the session's thread only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/tensor.h"

namespace tfd::training {

class TrainingSession;

// What a step runs: BeforeRun adds to it (TF's SessionRunArgs). The names
// stay the same from step to step in the common case, which lets the
// session reuse the callable it prepared for them; fed values change.
class StepArgs {
 public:
  // Adds `name` to the fetches (once, however many hooks ask) and returns
  // its index in StepValues::fetches.
  int AddFetch(const std::string& name);
  void AddTarget(const std::string& name);
  // Feeds `value` to `name` ("x:0") this step; INVALID_ARGUMENT naming it
  // when it is fed already (TF: a tensor fed by a hook and by the user).
  Status AddFeed(const std::string& name, Tensor value);

  const std::vector<std::string>& fetches() const { return fetches_; }
  const std::vector<std::string>& targets() const { return targets_; }
  const std::vector<std::string>& feed_names() const { return feed_names_; }
  const std::vector<Tensor>& feed_values() const { return feed_values_; }
  void Clear() {
    fetches_.clear();
    targets_.clear();
    feed_names_.clear();
    feed_values_.clear();
  }

 private:
  std::vector<std::string> fetches_;
  std::vector<std::string> targets_;
  std::vector<std::string> feed_names_;
  std::vector<Tensor> feed_values_;
};

// A step's results, fetches in StepArgs' order (TF's SessionRunValues).
struct StepValues {
  const std::vector<Tensor>& fetches;
};

class SessionHook {
 public:
  virtual ~SessionHook() = default;
  virtual Status Begin(TrainingSession& session) { return OkStatus(); }
  virtual Status AfterCreateSession(TrainingSession& session) { return OkStatus(); }
  virtual Status BeforeRun(TrainingSession& session, StepArgs& args) { return OkStatus(); }
  virtual Status AfterRun(TrainingSession& session, const StepValues& values) {
    return OkStatus();
  }
  virtual void AfterRestore(TrainingSession& session, int64_t step) {}
  virtual Status End(TrainingSession& session, const Status& status) { return OkStatus(); }
};

// A fetched scalar as a double; NaN when it is not a numeric scalar.
double ScalarValue(const Tensor& t);

}  // namespace tfd::training
