// The one explicit list of op families. Every op the runtime knows is
// registered from here: add a family's Register*Ops call below.
//
//   OpRegistry registry;
//   TFD_RETURN_IF_ERROR(kernels::RegisterAll(registry));
#pragma once

#include "common/op_registry.h"

namespace tfd::kernels {

Status RegisterAll(OpRegistry& registry);

}  // namespace tfd::kernels
