// TaskHost: one task of a cluster with everything a tfd daemon serves (its
// master and worker over Cap'n Proto, the data plane, the compute pool, the
// variables restored from its checkpoint on start, /metrics and /healthz
// with --http-listen), on the caller's event loop. tfd hosts one until a
// signal. A program that trains beside its own worker task hosts one too
// (tfctl train -- TFD_FLAGS), as TensorFlow's in-process server did with its
// LocalMaster: LocalClient's calls reach the task's master as a local
// capability, without a socket or a wake-up of another process, which on a
// parameter server's step saves the client's round trip to its worker.
//
//   auto io = kj::setupAsyncIo();
//   TFD_ASSIGN_OR_RETURN(auto host, TaskHost::Start(config, io, logger));
//   auto client = host->LocalClient();
//   TFD_RETURN_IF_ERROR(client->CreateSession(graph));
//   ... client->RunCallable(...) ...
//   host->Drain();
//
// The task serves only while its event loop turns: in tfd always, in a
// program hosting one whenever that thread waits on the loop, as every
// Client call does. Peers that call in while the program is busy elsewhere
// wait for it (their deadlines still apply).
//
// Thread-safety: the thread that owns `io`, which must outlive the host.
#pragma once

#include <kj/async-io.h>

#include <boost/asio/thread_pool.hpp>
#include <memory>

#include <spdlog/logger.h>

#include "common/op_registry.h"
#include "common/resource_mgr.h"
#include "common/status.h"
#include "daemon/checkpoint/checkpoint_manager.h"
#include "daemon/client/client.h"
#include "daemon/distributed/loop_inbox.h"
#include "daemon/distributed/task_env.h"
#include "daemon/distributed/task_server.h"
#include "daemon/http_endpoint.h"
#include "daemon/tfd_config.h"
#include "daemon/transport/data_plane.h"
#include "daemon/transport/ucx_worker.h"

namespace tfd {

class TaskHost {
 public:
  // Builds the task `config` names, restores its checkpoint (with
  // --checkpoint-dir), starts its data plane and listens on config.listen
  // (and config.http_listen). Logs to `logger`. Fails with the reason, and
  // the host is gone: a directory that cannot be used, no data plane, an
  // address taken (UNAVAILABLE, naming the address).
  static StatusOr<std::unique_ptr<TaskHost>> Start(const TfdConfig& config, kj::AsyncIoContext& io,
                                                   std::shared_ptr<spdlog::logger> logger);
  // tfd's log: stderr, in config's --log-format (else as stderr suggests,
  // daemon/log_format.h), lines from config's --log-level up, each flushed
  // from info up.
  static std::shared_ptr<spdlog::logger> StderrLogger(const TfdConfig& config);
  // Drains first, cancelling at once, unless Drain ran already; then takes
  // the HTTP port, the services and their connections down, and stops the
  // compute pool last, so that a kernel still running finds the loop gone
  // and fails at once.
  ~TaskHost();
  TaskHost(const TaskHost&) = delete;
  TaskHost& operator=(const TaskHost&) = delete;

  TaskEnv& env() { return env_; }
  unsigned port() const { return port_; }

  // A client of this task's master and worker in this process: no
  // connection and no login (the caller is the host's owner). It waits on
  // the host's loop, polling before it sleeps as --spin-wait-us says, and
  // must go before the host.
  std::unique_ptr<Client> LocalClient();

  // Stops the task in order, so that nothing a step uses goes while the
  // step runs. From the call until the host is destroyed /healthz answers
  // 503 "draining"; no new connection is accepted and this task's master
  // starts no new step. The steps still running — those this task is the
  // master of, wherever their partitions run, and the partitions of other
  // masters' steps here — get --drain-grace (2 s by default) to finish, or
  // until `cut_short` resolves (tfd: a second stop signal). Then each is
  // cancelled with UNAVAILABLE "<task> is shutting down: ...", on every
  // task it runs on and to its client, and waited for up to 5 s to unwind.
  // Once only; later calls return at once.
  void Drain(kj::Promise<void> cut_short = kj::NEVER_DONE);

  struct PrivateKey {};
  TaskHost(PrivateKey, kj::AsyncIoContext& io);

 private:
  Status Build(const TfdConfig& config);
  // UCX (with --data-plane-transports=shm) and the DataPlane over it.
  void StartDataPlane(const TfdConfig& config);
  // No step runs: none of this task's master, no partition here.
  bool Idle() const;
  // Turns the loop until Idle(), `bound` passes or `*hurry` (when given)
  // is set.
  void WaitForSteps(kj::Duration bound, const bool* hurry);

  kj::AsyncIoContext& io_;
  // First, so it outlives everything that points into it.
  TaskEnv env_;
  OpRegistry registry_;
  ResourceMgr resources_;
  KernelEnv kernel_env_;
  // Before the pool, so it outlives any checkpoint work on it.
  std::unique_ptr<CheckpointManager> checkpoints_;
  std::unique_ptr<boost::asio::thread_pool> pool_;
  LoopInbox inbox_;
  kj::Promise<void> inbox_draining_ = nullptr;
  std::unique_ptr<UcxWorker> ucx_;  // null: streams only
  std::unique_ptr<DataPlane> data_plane_;
  std::unique_ptr<TaskServer> server_;
  std::unique_ptr<HttpEndpoint> http_;  // with --http-listen
  unsigned port_ = 0;
  std::chrono::microseconds spin_wait_{0};  // --spin-wait-us, for LocalClient
  std::chrono::milliseconds drain_grace_{0};  // --drain-grace
  bool drained_ = false;
};

}  // namespace tfd
