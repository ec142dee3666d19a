// PartitionRunner: how a master session runs the partitions of its steps —
// this task's own in process, another task's over the step channel. The
// master depends on this, not on the task's worker, which implements it
// (WorkerService: it owns the task's rendezvous and step channel).
//
//   runner.RunHere(executor, {.step_id = id, .feeds = ...}).then([](PartitionResult r) { ... });
//   runner.RunThere(task, handle, id, timeout_ms, trace).then([](StepStats s) { ... });
//
// Thread-safety: event-loop thread only.
#pragma once

#include <kj/async.h>

#include <cstdint>
#include <memory>
#include <string>

#include "common/step_stats.h"
#include "daemon/distributed/partition_run.h"
#include "daemon/runtime/executor.h"

namespace tfd {

class PartitionRunner {
 public:
  // As a Cap'n Proto server's, which its implementation may also be.
  virtual ~PartitionRunner() noexcept(false) = default;

  // One step of this task's partition `executor`, in this process: the
  // only partition whose feeds and fetches travel (partition_run.h,
  // RunPartition). Dropping the promise cancels it.
  virtual kj::Promise<PartitionResult> RunHere(std::shared_ptr<Executor> executor,
                                               PartitionStep step) = 0;
  // One step of the partition `task` registered for this task's master
  // under `handle` (registerGraph's answer), over the step channel
  // (step_channel.h, StepChannel::Run): resolves with its nodes when
  // `trace`, rejects with its error there, or with UNAVAILABLE when `task`
  // cannot be reached. Dropping the promise cancels it there.
  virtual kj::Promise<StepStats> RunThere(const std::string& task, uint64_t handle,
                                          int64_t step_id, int64_t timeout_ms, bool trace) = 0;
};

}  // namespace tfd
