#include "daemon/distributed/step_errors.h"

namespace tfd {
namespace {

// True when the failing node was a _Recv: its partition only waited for a
// tensor that another partition never sent, and that partition's error says
// why. A partition cancelled by another's error carries that error inside,
// but the details name its own node, the one that failed there.
bool FailedWaitingForTransfer(const Status& s) { return s.op() == "_Recv"; }

}  // namespace

Status OnTask(const std::string& task, const Status& s) {
  return s.task() == task ? s : s.WithTask(task);
}

Status MostTelling(const std::vector<Status>& errors) {
  if (errors.empty()) return OkStatus();
  if (!FailedWaitingForTransfer(errors.front())) return errors.front();
  for (const Status& s : errors) {
    if (s.code() == errors.front().code() && !FailedWaitingForTransfer(s)) return s;
  }
  return errors.front();
}

}  // namespace tfd
