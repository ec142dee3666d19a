// The data op family: input pipelines (reading MNIST-format IDX files,
// shuffling, batching, epochs, sharding by worker). Called from
// kernels/register_all.cc.
#pragma once

#include "common/op_registry.h"

namespace tfd::kernels {

Status RegisterDataOps(OpRegistry& registry);

}  // namespace tfd::kernels
