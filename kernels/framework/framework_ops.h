// Ops the runtime itself inserts into graphs (feeds, fetches; later the
// Send/Recv pairs of partitioned graphs). Names start with '_' so they never
// collide with users' ops. Called from kernels/register_all.cc.
#pragma once

#include "common/op_registry.h"

namespace tfd::kernels {

Status RegisterFrameworkOps(OpRegistry& registry);

// Part of RegisterFrameworkOps: _Send, _Recv, _Signal.
Status RegisterSendRecvOps(OpRegistry& registry);

}  // namespace tfd::kernels
