// MasterService: the Master interface — sessions for clients, the
// cluster's barriers (every task reachable; variables initialized), each
// served here with a deadline rather than polled by clients, and the
// cluster's checkpoints. (The Gate in front of it: daemon/distributed/gate_service.h.)
//
// One MasterService serves one client: the task's server makes one for each
// connection, whose login hands it out, so that the sessions a client holds
// can be counted (at most `max_sessions`, --max-sessions-per-client). A
// session's graph is decoded with its constants charged to the task's
// memory budget: past it createSession is RESOURCE_EXHAUSTED naming the
// node and --memory-budget. It holds the task's env and local worker only,
// and is cheap to make.
//
//   auto master = kj::heap<MasterService>(env, worker, limits.max_sessions_per_client);
//
// Thread-safety: a capnp server; event-loop thread only.
#pragma once

#include "daemon/distributed/quota.h"
#include "daemon/distributed/task_env.h"
#include "daemon/distributed/task_metrics.h"
#include "daemon/distributed/partition_runner.h"
#include "schemas/rpc.capnp.h"

namespace tfd {

class MasterService final : public CountedServer<proto::Master> {
 public:
  // `local` runs the sessions' partitions (this task's worker, as their
  // PartitionRunner); it outlives them.
  MasterService(TaskEnv& env, PartitionRunner& local, int max_sessions = 64)
      : CountedServer(env.metrics), env_(env), local_(local), quota_(max_sessions) {}

 protected:
  kj::Promise<void> createSession(CreateSessionContext context) override;
  kj::Promise<void> waitCluster(WaitClusterContext context) override;
  kj::Promise<void> waitInitialized(WaitInitializedContext context) override;
  kj::Promise<void> reportUninitialized(ReportUninitializedContext context) override;
  // Cluster checkpoints, fanned out by daemon/distributed/checkpoint_fanout.h.
  kj::Promise<void> saveCheckpoint(SaveCheckpointContext context) override;
  kj::Promise<void> restoreCheckpoint(RestoreCheckpointContext context) override;
  kj::Promise<void> listCheckpoints(ListCheckpointsContext context) override;

 private:
  TaskEnv& env_;
  PartitionRunner& local_;
  Quota quota_;  // the sessions made here that are still alive
};

}  // namespace tfd
