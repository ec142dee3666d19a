// The control op family (NoOp, ControlTrigger, Print; Switch, Merge; Enter, Exit,
// NextIteration, LoopCond): registers its ops (definition, shape function, CPU
// kernel) with the registry. Called from kernels/register_all.cc.
#pragma once

#include "common/op_registry.h"

namespace tfd::kernels {

Status RegisterControlOps(OpRegistry& registry);
// Switch and Merge (cond_ops.cc).
Status RegisterCondOps(OpRegistry& registry);
// Enter, Exit, NextIteration and LoopCond (loop_ops.cc).
Status RegisterLoopOps(OpRegistry& registry);

}  // namespace tfd::kernels
