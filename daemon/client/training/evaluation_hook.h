// EvaluationHook: at the end of a run that succeeded, the graph's test-set
// accuracy (eval/accuracy) with the trained weights, when it has one.
//
//   EvaluationHook eval;
//   ... after the run: if (eval.accuracy()) print(*eval.accuracy());
//
// Thread-safety: the session's thread.
#pragma once

#include <optional>

#include "daemon/client/training/session_hook.h"

namespace tfd::training {

class EvaluationHook : public SessionHook {
 public:
  Status End(TrainingSession& session, const Status& status) override;
  const std::optional<double>& accuracy() const { return accuracy_; }

 private:
  std::optional<double> accuracy_;
};

}  // namespace tfd::training
