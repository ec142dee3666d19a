// The array family's entry point: one call per source file, so an op added
// to a file needs no edit here.
#include "kernels/array/array_ops.h"

#include "kernels/array/array_ops_internal.h"

namespace tfd::kernels {

Status RegisterArrayOps(OpRegistry& registry) {
  TFD_RETURN_IF_ERROR(array::RegisterConstOps(registry));
  TFD_RETURN_IF_ERROR(array::RegisterShapeOps(registry));
  TFD_RETURN_IF_ERROR(array::RegisterReshapeOps(registry));
  TFD_RETURN_IF_ERROR(array::RegisterFillOps(registry));
  TFD_RETURN_IF_ERROR(array::RegisterConcatOps(registry));
  TFD_RETURN_IF_ERROR(array::RegisterSplitOps(registry));
  TFD_RETURN_IF_ERROR(array::RegisterSliceOps(registry));
  TFD_RETURN_IF_ERROR(array::RegisterGatherOps(registry));
  TFD_RETURN_IF_ERROR(array::RegisterTransposeOps(registry));
  TFD_RETURN_IF_ERROR(array::RegisterCastOps(registry));
  TFD_RETURN_IF_ERROR(array::RegisterPadOps(registry));
  TFD_RETURN_IF_ERROR(array::RegisterMirrorPadOps(registry));
  TFD_RETURN_IF_ERROR(array::RegisterSegmentOps(registry));
  TFD_RETURN_IF_ERROR(array::RegisterPartitionOps(registry));
  TFD_RETURN_IF_ERROR(array::RegisterUniqueOps(registry));
  TFD_RETURN_IF_ERROR(array::RegisterWhereOps(registry));
  TFD_RETURN_IF_ERROR(array::RegisterSparseSegmentOps(registry));
  TFD_RETURN_IF_ERROR(array::RegisterStringHashOps(registry));
  TFD_RETURN_IF_ERROR(array::RegisterStopGradientOps(registry));
  TFD_RETURN_IF_ERROR(array::RegisterStridedSliceOps(registry));
  TFD_RETURN_IF_ERROR(array::RegisterGatherScatterNdOps(registry));
  TFD_RETURN_IF_ERROR(array::RegisterArrayGradients(registry));  // after the ops they differentiate
  return OkStatus();
}

}  // namespace tfd::kernels
