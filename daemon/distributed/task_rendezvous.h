// TaskRendezvous: the Rendezvous that partitions on this task use. Sends go
// to the task's table; a receive from this task's own sender waits there; a
// receive from another task asks that task's worker (recvTensor) over RPC,
// so tensors travel directly between the tasks that hold them.
//
// Thread-safety: Send and RecvAsync may be called from any thread (kernels
// run on the pool); the RPC side runs on the event loop via TaskEnv::loop.
#pragma once

#include <kj/async.h>

#include "common/rendezvous.h"
#include "daemon/rpc/kj_status.h"
#include "daemon/distributed/task_env.h"

namespace tfd {

class TaskRendezvous : public Rendezvous {
 public:
  // Construct on the event-loop thread.
  explicit TaskRendezvous(TaskEnv& env);
  ~TaskRendezvous() noexcept override;

  Status Send(int64_t step_id, const std::string& key, const Tensor& tensor) override;
  void RecvAsync(int64_t step_id, const std::string& key, CancellationManager& cancellation,
                 RecvCallback done) override;

 private:
  TaskEnv& env_;
  LogTaskErrors errors_;
  kj::TaskSet fetches_;  // remote receives in flight; event-loop thread only
};

}  // namespace tfd
