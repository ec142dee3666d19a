// TaskRendezvous: the Rendezvous that partitions on this task use. A send to
// a device of this task goes to the task's table; a send to another task is
// pushed there over the data plane (daemon/transport/data_plane.h) as soon as
// it is made, so tensors travel directly between the tasks that hold them,
// with no request per tensor. Every receive waits in this task's own table,
// where pushed tensors arrive (TaskEnv::rendezvous).
//
// Thread-safety: SendAsync and RecvAsync may be called from any thread
// (kernels run on the pool); pushes run on the event loop via TaskEnv::loop,
// and a send from the pool does not wait for the loop to start its push.
#pragma once

#include <kj/async.h>

#include "common/rendezvous.h"
#include "daemon/distributed/task_env.h"
#include "daemon/rpc/kj_status.h"

namespace tfd {

class TaskRendezvous : public Rendezvous {
 public:
  // Construct on the event-loop thread.
  explicit TaskRendezvous(TaskEnv& env);
  ~TaskRendezvous() noexcept override;

  void SendAsync(int64_t step_id, const std::string& key, const Tensor& tensor,
                 CancellationManager& cancellation, SendCallback done) override;
  void RecvAsync(int64_t step_id, const std::string& key, CancellationManager& cancellation,
                 RecvCallback done) override;

 private:
  TaskEnv& env_;
  LogTaskErrors errors_;
  kj::TaskSet pushes_;  // pushes in flight; event-loop thread only
};

}  // namespace tfd
