// The state family's entry point: variables and the optimizer updates that
// write them. One call per source file.
#include "kernels/state/state_ops.h"

#include "kernels/state/state_ops_internal.h"

namespace tfd::kernels {

Status RegisterStateOps(OpRegistry& registry) {
  TFD_RETURN_IF_ERROR(state::RegisterVariableOps(registry));
  TFD_RETURN_IF_ERROR(state::RegisterTrainingOps(registry));
  TFD_RETURN_IF_ERROR(state::RegisterScatterOps(registry));
  TFD_RETURN_IF_ERROR(state::RegisterSparseTrainingOps(registry));
  return OkStatus();
}

}  // namespace tfd::kernels
