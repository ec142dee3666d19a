// AccumulatorCore's part that is not a template.
#include "kernels/data_flow/accumulator_core.h"

namespace tfd::kernels {

Status AccumulatorWaitCancelled(const Status& why, const std::string& waiting_for) {
  const Code code = why.ok() ? Code::kCancelled : why.code();
  const std::string reason = why.message().empty() ? "cancelled" : why.message();
  return Status(code, reason + " while " + waiting_for);
}

}  // namespace tfd::kernels
