// TaskEnv: what one tfd task owns and its services share. Built by tfd's
// main (or a test) on the event-loop thread and outliving every service.
//
// Threads: the event loop (RPC, sessions, peers) owns everything kj; kernels
// run on `pool` (cheap ones also on the loop, see Executor; all of them
// where they became ready with `inline_kernels`). Work hops from
// the pool to the loop through `loop` (a LoopInbox, which does not wait) and
// back through cross-thread fulfillers.
#pragma once

#include <kj/async.h>

#include <atomic>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <string>

#include <spdlog/logger.h>

#include "common/cancellation.h"
#include "common/cluster_spec.h"
#include "common/mutex.h"
#include "common/op_kernel.h"
#include "daemon/distributed/checkpoint_participants.h"
#include "daemon/distributed/step_gate.h"
#include "daemon/distributed/task_metrics.h"
#include "daemon/runtime/local_rendezvous.h"

namespace tfd {

class LoopInbox;
class Peers;
class DataPlane;
class CheckpointManager;

// Steps running on this task, so abortStep can cancel them.
class StepRegistry {
 public:
  void Add(int64_t step_id, std::shared_ptr<CancellationManager> cm);
  void Remove(int64_t step_id, const CancellationManager* cm);
  // Cancels every partition of the step running here.
  void Abort(int64_t step_id, const Status& why);
  // Cancels every step running here (shutdown).
  void AbortAll(const Status& why);
  size_t size() const;

 private:
  mutable Mutex mu_;
  std::multimap<int64_t, std::weak_ptr<CancellationManager>> steps_ GUARDED_BY(mu_);
};

// A task's incarnation: 64 random bits, never 0 (what a peer that predates
// incarnations reports).
uint64_t NewIncarnation();

struct TaskEnv {
  std::string task;     // "/job:ps/replica:0/task:0"
  std::string address;  // where it listens
  // This run of the task; peers compare it to tell a restart (whose state
  // went back to a checkpoint, or to nothing) from a dropped connection.
  const uint64_t incarnation = NewIncarnation();
  ClusterSpec cluster;
  const OpRegistry* registry = nullptr;
  // Resources, logger, io dirs, and the size limits and memory budget that
  // graph loading (GraphFromProto(..., kernel_env->limits)), decoded feeds
  // and kernels obey.
  KernelEnv* kernel_env = nullptr;
  boost::asio::thread_pool* pool = nullptr;
  // Kernels run where they became ready, not on `pool` (Executor's
  // InlineKernelsFor); the pool still takes the heavy work of OnPool.
  bool inline_kernels = false;
  std::shared_ptr<spdlog::logger> logger;
  LoopInbox* loop = nullptr;  // work for the event-loop thread
  Peers* peers = nullptr;
  DataPlane* data_plane = nullptr;  // tensors pushed to and from other tasks
  CheckpointManager* checkpoints = nullptr;  // null without --checkpoint-dir
  LocalRendezvous rendezvous;
  StepRegistry steps;
  StepGate step_gate;  // the steps this task's master runs; held for a checkpoint
  // What this task, as a master, learned of every task's checkpoint parts:
  // which may be left out of a cluster checkpoint when they do not answer.
  CheckpointParticipants checkpoint_participants;

  std::chrono::milliseconds step_timeout{30000};  // default per step, and for reaching tasks
  bool log_device_placement = false;
  bool allow_soft_placement = false;  // see daemon/runtime/gpu_placement.h
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  std::atomic<uint32_t> sessions{0};
  std::atomic<uint32_t> registered_graphs{0};
  // Set when the task restored its variables from its checkpoint on start;
  // cleared by the next restore the cluster asks of it (TaskStatus).
  std::atomic<bool> restored_alone{false};
  TaskMetrics metrics;  // for /metrics (daemon/metrics_page.h)

  std::string cpu_device() const { return task + "/device:CPU:0"; }
};

}  // namespace tfd
