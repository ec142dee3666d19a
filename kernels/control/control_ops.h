// The control op family (NoOp, ControlTrigger, Print; Assert, CheckNumerics;
// Switch, Merge; Enter, Exit, NextIteration, LoopCond, RefEnter; the stacks of
// loop gradients): registers its ops (definition, shape function, CPU kernel)
// with the registry. Called from kernels/register_all.cc.
#pragma once

#include "common/op_registry.h"

namespace tfd::kernels {

Status RegisterControlOps(OpRegistry& registry);
// Switch and Merge (cond_ops.cc).
Status RegisterCondOps(OpRegistry& registry);
// Enter, Exit, NextIteration and LoopCond (loop_ops.cc).
Status RegisterLoopOps(OpRegistry& registry);
// Assert and CheckNumerics (check_ops.cc).
Status RegisterCheckOps(OpRegistry& registry);
// StackV2, StackPushV2, StackPopV2 and RefEnter: a loop's gradient (stack_ops.cc).
Status RegisterStackOps(OpRegistry& registry);

}  // namespace tfd::kernels
