// The data_flow family's per-file registration functions, called by
// RegisterDataFlowOps (data_flow_ops.cc). Private to kernels/data_flow.
#pragma once

#include "common/op_registry.h"

namespace tfd::kernels::data_flow {

Status RegisterQueueOps(OpRegistry& r);        // queue_ops.cc
Status RegisterAccumulatorOps(OpRegistry& r);  // accumulator_ops.cc

}  // namespace tfd::kernels::data_flow
