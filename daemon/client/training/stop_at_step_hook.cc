#include "daemon/client/training/stop_at_step_hook.h"

#include "api/train_signature.h"
#include "daemon/client/training/training_session.h"

namespace tfd::training {

StatusOr<int64_t> LastStep(const GraphDef& graph, int64_t max_steps) {
  if (max_steps > 0) return max_steps;
  const char* node = train::signature::kMaxSteps;
  for (const NodeDef& n : graph.nodes) {
    if (n.name != node) continue;
    auto it = n.attrs.find("value");
    if (n.op != "Const" || it == n.attrs.end() || !std::holds_alternative<Tensor>(it->second)) {
      return errors::InvalidArgument("'", node, "' should be a Const node, not ", n.op);
    }
    return static_cast<int64_t>(ScalarValue(std::get<Tensor>(it->second)));
  }
  return 0;
}

void StopAtStepHook::StopIfReached(TrainingSession& session) const {
  if (last_step_ > 0 && session.global_step() >= last_step_) {
    session.RequestStop("reached step " + std::to_string(last_step_));
  }
}

Status StopAtStepHook::AfterCreateSession(TrainingSession& session) {
  StopIfReached(session);
  return OkStatus();
}

Status StopAtStepHook::BeforeRun(TrainingSession& session, StepArgs& args) {
  StopIfReached(session);
  return OkStatus();
}

}  // namespace tfd::training
