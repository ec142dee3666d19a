// The summary op family, TF1's logging ops for TensorBoard: ScalarSummary,
// HistogramSummary, ImageSummary and MergeSummary, each a string scalar holding a
// serialized tensorflow.Summary (common/summary_proto.h) that
// tfd.summary.FileWriter writes. Registers the ops (definition, shape
// function, CPU kernel; no gradient, as TF1 has none). Called from
// kernels/register_all.cc.
#pragma once

#include "common/op_registry.h"

namespace tfd::kernels {

Status RegisterSummaryOps(OpRegistry& registry);
// ImageSummary (image_summary_op.cc).
Status RegisterImageSummaryOp(OpRegistry& registry);

}  // namespace tfd::kernels
