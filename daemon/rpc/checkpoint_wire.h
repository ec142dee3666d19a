// TaskCheckpoints and CheckpointInfo (daemon/checkpoint/checkpoint_info.h) to and from
// their rpc.capnp structs: the one place the two spellings meet.
//
//   TaskCheckpointsToProto(report, context.getResults().initResult());
//   TaskCheckpoints back = TaskCheckpointsFromProto(response.getResult());
//
// Thread-safety: plain functions.
#pragma once

#include "daemon/checkpoint/checkpoint_info.h"
#include "schemas/rpc.capnp.h"

namespace tfd {

void TaskCheckpointsToProto(const TaskCheckpoints& in, proto::TaskCheckpoints::Builder out);
TaskCheckpoints TaskCheckpointsFromProto(proto::TaskCheckpoints::Reader in);

}  // namespace tfd
