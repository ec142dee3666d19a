// WorkerService: the Worker interface of schemas/rpc.capnp — this task's
// partitions of steps, its side of tensor transfers, its variables.
//
// Registered partitions are capabilities (RegisteredGraph): when the master
// that registered them lets go — or its connection drops — they are freed.
// A registration names its master's task and session (StepContext::master,
// ::session) and offers the partition to that master on the step channel
// (daemon/distributed/step_channel.h), whose handle is how the master runs
// it: cheap kernels on the loop, the rest on the compute pool
// (daemon/distributed/partition_run.h); a `cancel` from the master, or
// abortStep naming the step, cancels the partition's waits. Checkpoint calls
// do their file work on the compute pool too
// (daemon/checkpoint/checkpoint_manager.h).
//
// It is also this task's master's PartitionRunner: the master's own
// partition runs here in process, its partitions elsewhere over the channel.
//
// What masters make this task hold is counted: a registered partition's
// constants are charged to the task's memory budget as they are decoded
// (past it registerGraph is RESOURCE_EXHAUSTED naming the node and
// --memory-budget), a runStep's feeds as they are copied out of its request,
// and at most `max_registered_graphs` partitions are registered at once
// (--max-registered-graphs), those being registered included.
//
// Thread-safety: a capnp server; event-loop thread only.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "daemon/distributed/partition_runner.h"
#include "daemon/distributed/quota.h"
#include "daemon/distributed/step_channel.h"
#include "daemon/distributed/task_env.h"
#include "daemon/distributed/task_metrics.h"
#include "daemon/distributed/task_rendezvous.h"
#include "schemas/rpc.capnp.h"

namespace tfd {

class WorkerService final : public CountedServer<proto::Worker>, public PartitionRunner {
 public:
  explicit WorkerService(TaskEnv& env, int max_registered_graphs = 4096);

  // PartitionRunner: with this task's rendezvous (where its partitions send
  // and receive), and over its step channel.
  kj::Promise<PartitionResult> RunHere(std::shared_ptr<Executor> executor,
                                       PartitionStep step) override;
  kj::Promise<StepStats> RunThere(const std::string& task, uint64_t handle, int64_t step_id,
                                  int64_t timeout_ms, bool trace) override;

 protected:
  kj::Promise<void> registerGraph(RegisterGraphContext context) override;
  kj::Promise<void> abortStep(AbortStepContext context) override;
  kj::Promise<void> status(StatusContext context) override;
  kj::Promise<void> listVariables(ListVariablesContext context) override;
  kj::Promise<void> readVariable(ReadVariableContext context) override;
  kj::Promise<void> saveCheckpoint(SaveCheckpointContext context) override;
  kj::Promise<void> restoreCheckpoint(RestoreCheckpointContext context) override;
  kj::Promise<void> listCheckpoints(ListCheckpointsContext context) override;
  kj::Promise<void> finishCheckpoint(FinishCheckpointContext context) override;
  kj::Promise<void> holdSteps(HoldStepsContext context) override;
  kj::Promise<void> releaseSteps(ReleaseStepsContext context) override;

 private:
  // The presence here of the master session named `session` (registerGraph):
  // one object shared by every graph it registers, so kernels see them as
  // one session until the last is released.
  std::shared_ptr<const std::string> SessionPresenceFor(const std::string& session);

  TaskEnv& env_;
  // Partitions registered here and alive, and registrations under way.
  Quota registered_;
  TaskRendezvous rendezvous_;
  StepChannel channel_;
  // By session name; an entry expires with the session's last graph here
  // and is pruned by the next registration.
  std::map<std::string, std::weak_ptr<const std::string>> sessions_;
};

}  // namespace tfd
