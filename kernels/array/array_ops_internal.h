// The array family's per-file registration functions, called in order by
// RegisterArrayOps (array_ops.cc). Private to kernels/array.
#pragma once

#include "common/op_registry.h"

namespace tfd::kernels::array {

Status RegisterConstOps(OpRegistry& r);         // const_ops.cc
Status RegisterShapeOps(OpRegistry& r);         // shape_ops.cc
Status RegisterReshapeOps(OpRegistry& r);       // reshape_ops.cc
Status RegisterFillOps(OpRegistry& r);          // fill_ops.cc
Status RegisterConcatOps(OpRegistry& r);        // concat_ops.cc
Status RegisterSplitOps(OpRegistry& r);         // split_ops.cc
Status RegisterSliceOps(OpRegistry& r);         // slice_ops.cc
Status RegisterGatherOps(OpRegistry& r);        // gather_ops.cc
Status RegisterTransposeOps(OpRegistry& r);     // transpose_ops.cc
Status RegisterCastOps(OpRegistry& r);          // cast_ops.cc
Status RegisterPadOps(OpRegistry& r);           // pad_ops.cc
Status RegisterMirrorPadOps(OpRegistry& r);     // mirror_pad_ops.cc: with gradients
Status RegisterSegmentOps(OpRegistry& r);       // segment_ops.cc
Status RegisterPartitionOps(OpRegistry& r);     // partition_ops.cc: with gradients
Status RegisterUniqueOps(OpRegistry& r);        // unique_ops.cc
Status RegisterWhereOps(OpRegistry& r);         // where_op.cc
Status RegisterSparseSegmentOps(OpRegistry& r); // sparse_segment_ops.cc: with gradients
Status RegisterStringHashOps(OpRegistry& r);    // string_hash_ops.cc
Status RegisterStopGradientOps(OpRegistry& r);  // stop_gradient_ops.cc: with gradients
Status RegisterStridedSliceOps(OpRegistry& r);  // strided_slice_ops.cc: with gradients
Status RegisterGatherScatterNdOps(OpRegistry& r);  // gather_scatter_nd_ops.cc: with gradients
Status RegisterArrayGradients(OpRegistry& r);   // array_grad.cc: gradient functions

}  // namespace tfd::kernels::array
