// StopAtStepHook: ends the loop at a global step, as TF's StopAtStepHook.
// The loop's other natural end, the input running out, is the session's
// own (OUT_OF_RANGE from a step, as in TF).
//
//   TFD_ASSIGN_OR_RETURN(int64_t last, LastStep(graph, flags.steps));
//   StopAtStepHook stop(last);  // "reached step 1000"
//
// Thread-safety: the session's thread.
#pragma once

#include "common/graph_def.h"
#include "daemon/client/training/session_hook.h"

namespace tfd::training {

// The step a run stops at: `max_steps` when positive, else the graph's
// train/max_steps when it has one, else 0 (no step limit).
// INVALID_ARGUMENT when train/max_steps is not a Const.
StatusOr<int64_t> LastStep(const GraphDef& graph, int64_t max_steps);

// Stops when the global step has reached `last_step` (> 0): as soon as the
// session is created (a restored model already there runs no step, and the
// loop's should-stop says so before its first step), and before each step.
// A graph without a global step never stops here.
class StopAtStepHook : public SessionHook {
 public:
  explicit StopAtStepHook(int64_t last_step) : last_step_(last_step) {}
  Status AfterCreateSession(TrainingSession& session) override;
  Status BeforeRun(TrainingSession& session, StepArgs& args) override;

 private:
  void StopIfReached(TrainingSession& session) const;

  const int64_t last_step_;
};

}  // namespace tfd::training
