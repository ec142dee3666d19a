// The data_flow family's entry point: queues, gradient accumulators, the
// sync round and tensor arrays. One call per source file.
#include "kernels/data_flow/data_flow_ops.h"

#include "kernels/data_flow/data_flow_ops_internal.h"

namespace tfd::kernels {

Status RegisterDataFlowOps(OpRegistry& registry) {
  TFD_RETURN_IF_ERROR(data_flow::RegisterQueueOps(registry));
  TFD_RETURN_IF_ERROR(data_flow::RegisterAccumulatorOps(registry));
  TFD_RETURN_IF_ERROR(data_flow::RegisterSparseAccumulatorOps(registry));
  TFD_RETURN_IF_ERROR(data_flow::RegisterSyncRoundOps(registry));
  TFD_RETURN_IF_ERROR(data_flow::RegisterTensorArrayOps(registry));
  return OkStatus();
}

}  // namespace tfd::kernels
