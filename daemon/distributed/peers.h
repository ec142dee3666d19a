// Peers: connections from this task to the other tasks of the cluster (and
// a direct line to itself), made on demand and kept.
//
// Services() connects when there is no live connection. One attempt per
// task is shared by every caller that needs the task meanwhile. A caller that
// waits for the task to start (a run started before its tasks, as in
// TensorFlow) keeps the attempt retrying with backoff up to its deadline; one
// that only wants a task that is up (a checkpoint, an abort) fails as soon
// as a try has failed. Each caller gives up at its own deadline with
// UNAVAILABLE naming the task, its address and the last error. An attempt
// that failed is never handed to a later caller: the next one starts afresh,
// so a task that was down for a while is reached as soon as it is up again.
// A connection that drops is forgotten at once, and the task's connection
// counter moves on, telling sessions that graphs registered there are gone.
//
//   peers.Services("/job:ps/replica:0/task:0", deadline)
//       .then([](TaskServices s) { ... s.worker.statusRequest() ... });
//
// Thread-safety: event-loop thread only.
#pragma once

#include <kj/async-io.h>

#include <map>
#include <memory>
#include <string>

#include <spdlog/logger.h>

#include "common/cluster_spec.h"
#include "daemon/rpc/connection.h"
#include "daemon/rpc/kj_status.h"
#include "daemon/rpc/tls.h"
#include "schemas/rpc.capnp.h"

namespace tfd {

class DataPlane;

// The protocol tasks speak to each other: the calls of schemas/rpc.capnp
// between tasks and the messages of the data plane (step messages, pushes).
// A task logs in only to a task of its own protocol, and admits only those
// (Gate.login: FAILED_PRECONDITION naming both protocols and the task), so
// nothing in tfd serves a peer of another. A change a task of the previous
// protocol would misread or lack moves it on. 0 is a tfd from before the
// handshake (which also ran partitions with a runStep call).
inline constexpr uint32_t kPeerProtocol = 1;

// FAILED_PRECONDITION naming `task`, which speaks `protocol`, and `self`,
// which speaks kPeerProtocol; OK when they are the same.
Status CheckPeerProtocol(const std::string& task, uint32_t protocol, const std::string& self);

// The capabilities a task serves, as obtained through its Gate.
struct TaskServices {
  proto::Master::Client master = nullptr;
  proto::Worker::Client worker = nullptr;
  uint64_t incarnation = 0;  // the task's (TaskEnv::incarnation)
};

class Peers {
 public:
  // What a caller of Services does about a task that does not answer.
  enum class Patience {
    kWaitForStart,  // retry until the deadline: the task may be starting
    kFailIfDown,    // UNAVAILABLE after the first failed try
    // kWaitForStart for a task never reached yet (a cluster still
    // starting); for one this task has reached before, at most
    // kBackPatience: long enough for a service manager's restart (systemd
    // waits 2 s, RestartSec), while a step does not wait out its deadline
    // for a task gone for good (a ps drained by SIGTERM refuses connections
    // at once); it fails UNAVAILABLE, and the trainer's recovery waits.
    kWaitForFirstStart,
  };

  // `data_plane` (may be null) gets a link to each task this task logs in
  // to, before Services resolves: shared memory when the task's invitation
  // says it is on this host, else a stream this task opens to the task's
  // port with the same credential (and TLS); it loses the link when the
  // connection is forgotten, and a link that breaks forgets the connection.
  Peers(kj::AsyncIoProvider& io, kj::Timer& timer, ClusterSpec cluster, std::string self_task,
        TaskServices self, std::string token, DataPlane* data_plane,
        std::shared_ptr<spdlog::logger> logger);
  ~Peers();

  // The services of `task` ("/job:J/replica:0/task:T"). Rejects with
  // UNAVAILABLE at the deadline, UNAUTHENTICATED on a refused token,
  // FAILED_PRECONDITION when either side refuses the other's peer protocol
  // (kPeerProtocol; neither is asked again), NOT_FOUND for a task not in
  // the cluster.
  kj::Promise<TaskServices> Services(const std::string& task, kj::TimePoint deadline,
                                     Patience patience = Patience::kWaitForStart);
  // Bumped each time the connection to `task` is lost or forgotten.
  uint64_t ConnectionNumber(const std::string& task) const;
  // From now on connections to other tasks are TLS clients that check the
  // task's certificate against the CA, its cluster address's host, and that
  // it names the task dialled (tfd:task/JOB/N).
  void UseTls(std::shared_ptr<Tls> tls) { tls_ = std::move(tls); }
  // Drops the connection to `task` (after an error that suggests it is gone).
  void Forget(const std::string& task);

  const ClusterSpec& cluster() const { return cluster_; }
  const std::string& self_task() const { return self_task_; }
  kj::Timer& timer() { return timer_; }

  // How long one login may take before the attempt tries a new connection
  // (a task that accepts but does not answer: stopped, or overloaded).
  static constexpr kj::Duration kLoginTimeout = 10 * kj::SECONDS;
  // How long kWaitForFirstStart waits for a task it reached before.
  static constexpr kj::Duration kBackPatience = 5 * kj::SECONDS;

 private:
  struct Peer {
    std::string address;
    kj::Own<RpcConnection> connection;             // once logged in
    kj::Maybe<kj::ForkedPromise<TaskServices>> services;  // the attempt, or its success
    bool connected = false;      // `services` has resolved with a live connection
    bool reached = false;        // some attempt has connected, now or before
    bool failed = false;         // `services` has failed: the next caller starts afresh
    // The latest deadline of the callers that wait for the task to start;
    // with none, the attempt fails at its first failed try.
    kj::TimePoint give_up_at = kj::origin<kj::TimePoint>();
    std::string last_error;      // of the attempt in progress, for the callers' messages
    uint64_t attempt = 0;        // which attempt callbacks belong to; Forget moves it too
    uint64_t connection_number = 0;
  };

  void StartAttempt(const std::string& task, Peer& peer);
  // One try, then (on failure) another after `backoff`, until peer.give_up_at.
  kj::Promise<TaskServices> Connect(const std::string& task, uint64_t attempt,
                                    kj::Duration backoff);
  kj::Promise<TaskServices> Login(const std::string& task, uint64_t attempt,
                                  kj::Own<kj::AsyncIoStream> stream);
  // A connection to `task` at `address`; under TLS, to the holder of that
  // task's certificate. A `data_stream` socket is sized for tensors first
  // (daemon/transport/stream_socket.h).
  kj::Promise<kj::Own<kj::AsyncIoStream>> Dial(const std::string& task, const std::string& address,
                                               bool data_stream = false);
  // The data-plane link to `task`, from the invitation of its login.
  kj::Promise<void> OpenDataPlane(const std::string& task,
                                  proto::DataPlaneInvitation::Reader invitation);
  // The caller's view of the shared attempt, bounded by its own deadline.
  kj::Promise<TaskServices> Waiter(const std::string& task, Peer& peer, kj::TimePoint deadline);
  // The peer entry if `attempt` is still its current attempt.
  Peer* Current(const std::string& task, uint64_t attempt);

  kj::AsyncIoProvider& io_;
  kj::Timer& timer_;
  ClusterSpec cluster_;
  std::string self_task_;
  TaskServices self_;
  std::string token_;
  std::shared_ptr<Tls> tls_;  // null: plain TCP
  DataPlane* data_plane_;
  std::shared_ptr<spdlog::logger> logger_;
  std::map<std::string, Peer> peers_;
  LogTaskErrors errors_;
  kj::TaskSet watches_;  // one per live connection: forgets it when it drops
};

// "/job:J/replica:0/task:T" -> (job, task); INVALID_ARGUMENT otherwise.
StatusOr<std::pair<std::string, int>> SplitTaskName(const std::string& task);

}  // namespace tfd
