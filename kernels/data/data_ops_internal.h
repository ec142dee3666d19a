// The data family's per-file registration functions, called by
// RegisterDataOps (data_ops.cc). Private to kernels/data.
#pragma once

#include "common/op_registry.h"
#include "common/status.h"

namespace tfd::kernels::data {

Status RegisterIdxOps(OpRegistry& r);     // idx_ops.cc
Status RegisterCriteoOps(OpRegistry& r);  // criteo_ops.cc
Status RegisterCifarOps(OpRegistry& r);   // cifar_ops.cc

}  // namespace tfd::kernels::data
