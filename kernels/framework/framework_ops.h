// Ops the runtime itself inserts into graphs (feeds, fetches; later the
// Send/Recv pairs of partitioned graphs). Names start with '_' so they never
// collide with users' ops. Called from kernels/register_all.cc.
#pragma once

#include "common/op_registry.h"

namespace tfd::kernels {

Status RegisterFrameworkOps(OpRegistry& registry);

// Part of RegisterFrameworkOps: _Send, _Recv, _Signal.
Status RegisterSendRecvOps(OpRegistry& registry);

// Part of RegisterFrameworkOps: _CopyToDevice and _CopyToHost, which the
// runtime puts where a tensor moves between host and device memory
// (daemon/runtime/device_copies.h). Their kernels are GPU kernels,
// registered with the others (kernels/gpu/register_gpu.h).
Status RegisterDeviceCopyOps(OpRegistry& registry);
inline constexpr const char* kCopyToDeviceOp = "_CopyToDevice";
inline constexpr const char* kCopyToHostOp = "_CopyToHost";

}  // namespace tfd::kernels
