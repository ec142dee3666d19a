// MasterService: the Master interface — sessions for clients, the
// cluster's barriers (every task reachable; variables initialized), each
// served here with a deadline rather than polled by clients, and the
// cluster's checkpoints. (The Gate in front of it: daemon/distributed/gate_service.h.)
//
// Thread-safety: a capnp server; event-loop thread only.
#pragma once

#include "daemon/distributed/task_env.h"
#include "daemon/distributed/task_metrics.h"
#include "daemon/distributed/partition_runner.h"
#include "schemas/rpc.capnp.h"

namespace tfd {

class MasterService final : public CountedServer<proto::Master> {
 public:
  // `local` runs the sessions' partitions (this task's worker, as their
  // PartitionRunner); it outlives them.
  MasterService(TaskEnv& env, PartitionRunner& local)
      : CountedServer(env.metrics), env_(env), local_(local) {}

 protected:
  kj::Promise<void> createSession(CreateSessionContext context) override;
  kj::Promise<void> waitCluster(WaitClusterContext context) override;
  kj::Promise<void> waitInitialized(WaitInitializedContext context) override;
  // Cluster checkpoints, fanned out by daemon/distributed/checkpoint_fanout.h.
  kj::Promise<void> saveCheckpoint(SaveCheckpointContext context) override;
  kj::Promise<void> restoreCheckpoint(RestoreCheckpointContext context) override;
  kj::Promise<void> listCheckpoints(ListCheckpointsContext context) override;

 private:
  TaskEnv& env_;
  PartitionRunner& local_;
};

}  // namespace tfd
