// TaskServer: a task's listening socket and the services behind it.
//
// Each accepted connection gets its own RPC system whose bootstrap is the
// Gate; reader limits are set for large tensors (daemon/rpc_connection.h).
//
//   TaskServer server(env, io, token);
//   uint port = server.Listen("127.0.0.1:0").wait(io.waitScope);
//   ... server.StopAccepting();
//
// Thread-safety: event-loop thread only.
#pragma once

#include <kj/async-io.h>

#include <string>

#include "daemon/master_service.h"
#include "daemon/peers.h"
#include "daemon/rpc_connection.h"
#include "daemon/task_env.h"
#include "daemon/worker_service.h"

namespace tfd {

class TaskServer {
 public:
  TaskServer(TaskEnv& env, kj::AsyncIoProvider& io, kj::Timer& timer, std::string token);
  ~TaskServer();

  // Binds and starts accepting; resolves to the bound port.
  kj::Promise<unsigned> Listen(const std::string& address);
  // Stops accepting new connections; live ones carry on.
  void StopAccepting();
  Peers& peers() { return *peers_; }

 private:
  kj::Promise<void> AcceptLoop(kj::ConnectionReceiver& listener);

  TaskEnv& env_;
  kj::AsyncIoProvider& io_;
  std::string token_;
  proto::Master::Client master_;
  proto::Worker::Client worker_;
  kj::Own<Peers> peers_;
  kj::Own<kj::ConnectionReceiver> listener_;
  kj::Promise<void> accepting_ = nullptr;
  LogTaskErrors errors_;
  kj::TaskSet connections_;
};

}  // namespace tfd
