#include "daemon/client/training/evaluation_hook.h"

#include "api/train_signature.h"
#include "daemon/client/training/training_session.h"

namespace tfd::training {

Status EvaluationHook::End(TrainingSession& session, const Status& status) {
  const char* node = train::signature::kAccuracy;
  if (!status.ok() || !session.Has(node)) return OkStatus();
  auto out = session.client().Run({}, {node}, {}, {});
  if (!out.ok()) return out.status().WithContext("evaluating " + std::string(node));
  accuracy_ = ScalarValue(out->fetches[0]);
  return OkStatus();
}

}  // namespace tfd::training
