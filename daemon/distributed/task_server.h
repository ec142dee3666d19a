// TaskServer: a task's listening socket and the services behind it.
//
// Each accepted connection gets its own RPC system whose bootstrap is the
// Gate (daemon/distributed/gate_service.h); reader limits are set for large tensors
// (daemon/rpc/connection.h). A connection that starts with the data-plane
// stream magic is a stream another task opens to push tensors here
// (daemon/transport/stream_frames.h): its hello's credential is judged as a
// login is, and then the data plane reads it. Streams are admitted, limited
// and shed exactly like RPC connections. Until a connection has logged in it is held to
// ServerLimits: a small byte budget, a login deadline, caps on connections.
// Every connection refused, shed, timed out or broken is logged once with
// the peer's address and the reason, a few lines per second per kind.
//
// Once logged in, what a connection makes the task hold is bounded (see
// ServerLimits): each frame by --max-message-bytes, all frames together by
// the task's memory budget, shared by every connection (a frame waits for
// room before its body is read; daemon/rpc/frame_ledger.h), and its sessions
// by the MasterService each connection gets for itself.
//
// With `tls` every accepted connection is a TLS server whose handshake must
// finish, client certificate checked, before a byte reaches Cap'n Proto; the
// login deadline and the pending-connection caps cover the handshake, so a
// peer that never finishes it holds a slot no longer than one that never
// logs in. A refused handshake is logged with the peer and OpenSSL's reason.
//
// The accept loop does not end on errors: out of file descriptors
// (EMFILE/ENFILE) it sheds the connection that has waited longest without
// logging in, backs off briefly and goes on, so a task under a connection
// flood keeps serving its logged-in peers and clients and recovers once the
// flood ends.
//
//   TaskServer server(env, io, timer, token, limits);
//   uint port = server.Listen("127.0.0.1:0").wait(io.waitScope);
//   ... server.StopAccepting();
//
// Thread-safety: event-loop thread only.
#pragma once

#include <kj/async-io.h>

#include <map>
#include <string>

#include "daemon/distributed/authenticator.h"
#include "daemon/distributed/connection_table.h"
#include "daemon/distributed/login_throttle.h"
#include "daemon/distributed/master_service.h"
#include "daemon/distributed/peers.h"
#include "daemon/rpc/rate_limited_log.h"
#include "daemon/rpc/connection.h"
#include "daemon/rpc/tls.h"
#include "daemon/distributed/server_limits.h"
#include "daemon/distributed/task_env.h"
#include "daemon/distributed/worker_service.h"

namespace tfd {

class TaskServer {
 public:
  // `tls` null: plain TCP.
  TaskServer(TaskEnv& env, kj::AsyncIoProvider& io, kj::Timer& timer, std::string token,
             ServerLimits limits = {}, std::shared_ptr<Tls> tls = nullptr);
  ~TaskServer();

  // Binds and starts accepting; resolves to the bound port.
  kj::Promise<unsigned> Listen(const std::string& address);
  // Stops accepting new connections; live ones carry on.
  void StopAccepting();
  Peers& peers() { return *peers_; }
  // The task's own master and worker, for a client in this process
  // (daemon/task_host.h): its calls need no connection and no login.
  TaskServices local() { return {master_, worker_, env_.incarnation}; }

 private:
  class Connection;

  kj::Promise<void> AcceptLoop();
  // After a failed accept: logs, sheds a pending connection when out of
  // file descriptors, and waits a little before the next try.
  kj::Promise<void> AcceptFailed(kj::Exception&& e);
  void Serve(kj::Own<kj::AsyncIoStream> stream);
  // Closes the connection that has waited longest without logging in; false
  // when there is none.
  bool ShedOldestPending(const std::string& why);
  // Closes pending connection `id`, logging `why` ("to make room for ...").
  void Shed(ConnectionTable::Id id, const std::string& why);
  // Now and then drops the rendezvous tables of steps that never ran here
  // and were never ended (their master died before telling this task).
  kj::Promise<void> ReapAbandonedSteps();

  TaskEnv& env_;
  kj::AsyncIoProvider& io_;
  kj::Timer& timer_;
  std::string token_;
  const ServerLimits limits_;
  std::shared_ptr<Tls> tls_;
  // The task's own master (for this process and its peers' view of it;
  // each connection gets a master of its own) and its one worker.
  proto::Master::Client master_;
  proto::Worker::Client worker_;
  // The object behind worker_ (which keeps it alive): each connection's
  // master runs its partitions, restricted logins get it guarded.
  WorkerService* worker_server_ = nullptr;
  kj::Own<Peers> peers_;
  RateLimitedLog log_;
  LoginThrottle throttle_;
  Authenticator auth_;
  ConnectionTable table_;
  const uint64_t max_message_bytes_;  // limits_.max_message_bytes, or derived
  std::map<ConnectionTable::Id, Connection*> live_;  // each owned by its task in connections_
  kj::Own<kj::ConnectionReceiver> listener_;
  kj::Promise<void> accepting_ = nullptr;
  kj::Duration accept_backoff_;
  kj::Promise<void> reaping_ = nullptr;
  LogTaskErrors errors_;
  // Last, so connections go before the books and logs they write to.
  kj::TaskSet connections_;
};

}  // namespace tfd
