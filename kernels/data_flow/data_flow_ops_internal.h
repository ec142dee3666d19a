// The data_flow family's per-file registration functions, called by
// RegisterDataFlowOps (data_flow_ops.cc). Private to kernels/data_flow.
#pragma once

#include "common/op_kernel.h"
#include "common/op_registry.h"

namespace tfd::kernels::data_flow {

Status RegisterQueueOps(OpRegistry& r);        // queue_ops.cc
Status RegisterAccumulatorOps(OpRegistry& r);  // accumulator_ops.cc
Status RegisterSparseAccumulatorOps(OpRegistry& r);  // sparse_accumulator_ops.cc
Status RegisterSyncRoundOps(OpRegistry& r);          // sync_round_ops.cc
Status RegisterTensorArrayOps(OpRegistry& r);        // tensor_array_ops.cc
Status RegisterTensorArrayGradients(OpRegistry& r);  // tensor_array_grad.cc

// The scalar input `i` of a kernel, of integer type T; INVALID_ARGUMENT
// naming `what` when it is not a scalar.
template <typename T>
StatusOr<T> ScalarInput(const OpKernelContext& ctx, int i, const char* what) {
  const Tensor& t = ctx.input(i);
  if (t.rank() != 0) return errors::InvalidArgument(what, " must be a scalar but is ", t.Describe());
  return t.scalar<T>();
}

}  // namespace tfd::kernels::data_flow
