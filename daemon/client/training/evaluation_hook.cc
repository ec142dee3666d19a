#include "daemon/client/training/evaluation_hook.h"

#include <string>
#include <utility>

#include "api/train_signature.h"
#include "daemon/client/training/training_session.h"

namespace tfd::training {

Status EvaluationHook::End(TrainingSession& session, const Status& status) {
  // Nothing to evaluate on after a stop while the cluster was waited for.
  if (!status.ok() || session.stopped_waiting()) return OkStatus();
  namespace sig = train::signature;
  for (auto [node, value] : {std::pair{sig::kAccuracy, &accuracy_}, std::pair{sig::kAuc, &auc_}}) {
    if (!session.Has(node)) continue;
    auto out = session.client().Run({}, {node}, {}, {});
    if (!out.ok()) return out.status().WithContext("evaluating " + std::string(node));
    *value = ScalarValue(out->fetches[0]);
  }
  return OkStatus();
}

}  // namespace tfd::training
