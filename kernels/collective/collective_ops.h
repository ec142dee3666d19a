// The collective op family: CollectiveReduce, an all-reduce among the
// workers of a job without a parameter server. Registers its op
// (definition, shape function, CPU kernel). Called from
// kernels/register_all.cc.
#pragma once

#include "common/op_registry.h"

namespace tfd::kernels {

Status RegisterCollectiveOps(OpRegistry& registry);

}  // namespace tfd::kernels
