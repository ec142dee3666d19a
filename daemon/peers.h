// Peers: connections from this task to the other tasks of the cluster (and
// a direct line to itself), made on demand and kept.
//
// Services() connects when there is no live connection, retrying with
// backoff until the deadline — so a run started before a task is up waits
// for it — and then fails with UNAVAILABLE naming the task and address. A
// connection that drops is forgotten at once, and the task's incarnation
// counter moves on, telling sessions that graphs registered there are gone.
//
//   peers.Services("/job:ps/replica:0/task:0", deadline)
//       .then([](TaskServices s) { ... s.worker.recvTensorRequest() ... });
//
// Thread-safety: event-loop thread only.
#pragma once

#include <kj/async-io.h>

#include <map>
#include <memory>
#include <string>

#include <spdlog/logger.h>

#include "common/cluster_spec.h"
#include "daemon/rpc_connection.h"
#include "daemon/rpc_status.h"
#include "schemas/rpc.capnp.h"

namespace tfd {

// The capabilities a task serves, as obtained through its Gate.
struct TaskServices {
  proto::Master::Client master = nullptr;
  proto::Worker::Client worker = nullptr;
};

class Peers {
 public:
  Peers(kj::AsyncIoProvider& io, kj::Timer& timer, ClusterSpec cluster, std::string self_task,
        TaskServices self, std::string token, std::shared_ptr<spdlog::logger> logger);

  // The services of `task` ("/job:J/replica:0/task:T"). Rejects with
  // UNAVAILABLE at the deadline, UNAUTHENTICATED on a refused token,
  // NOT_FOUND for a task not in the cluster.
  kj::Promise<TaskServices> Services(const std::string& task, kj::TimePoint deadline);
  // Bumped each time the connection to `task` is lost.
  uint64_t Incarnation(const std::string& task) const;
  // Drops the connection to `task` (after an error that suggests it is gone).
  void Forget(const std::string& task);

  const ClusterSpec& cluster() const { return cluster_; }
  const std::string& self_task() const { return self_task_; }
  kj::Timer& timer() { return timer_; }

 private:
  struct Peer {
    kj::Own<RpcConnection> connection;
    kj::Maybe<kj::ForkedPromise<TaskServices>> services;
    uint64_t incarnation = 0;
  };
  kj::Promise<TaskServices> Connect(const std::string& task, const std::string& address,
                                               kj::TimePoint deadline, kj::Duration backoff);

  kj::AsyncIoProvider& io_;
  kj::Timer& timer_;
  ClusterSpec cluster_;
  std::string self_task_;
  TaskServices self_;
  std::string token_;
  std::shared_ptr<spdlog::logger> logger_;
  std::map<std::string, Peer> peers_;
  LogTaskErrors errors_;
  kj::TaskSet watches_;  // one per live connection: forgets it when it drops
};

// "/job:J/replica:0/task:T" -> (job, task); INVALID_ARGUMENT otherwise.
StatusOr<std::pair<std::string, int>> SplitTaskName(const std::string& task);

}  // namespace tfd
