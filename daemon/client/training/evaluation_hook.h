// EvaluationHook: at the end of a run that succeeded, the graph's test-set
// accuracy (eval/accuracy) and held-out AUC (eval/auc) with the trained
// weights, those it has.
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
  const std::optional<double>& auc() const { return auc_; }

 private:
  std::optional<double> accuracy_;
  std::optional<double> auc_;
};

}  // namespace tfd::training
