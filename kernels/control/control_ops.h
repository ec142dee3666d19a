// The control op family: registers its ops (definition, shape function, CPU
// kernel) with the registry. Called from kernels/register_all.cc.
#pragma once

#include "common/op_registry.h"

namespace tfd::kernels {

Status RegisterControlOps(OpRegistry& registry);

}  // namespace tfd::kernels
