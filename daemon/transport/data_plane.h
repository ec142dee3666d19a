// DataPlane: tensors pushed from the task that produces them to the task
// that consumes them, over UCX (shared memory or cross-memory attach on one
// host, TCP or RDMA across hosts), beside the Cap'n Proto control plane.
//
// Push, not pull: a _Send hands its tensor to Push as soon as it is made;
// the bytes go from the tensor's own buffer (nothing is copied on the way
// out) into a pooled buffer on the receiver that becomes the receiver's
// tensor, and `deliver` puts it into the receiver's rendezvous, where the
// _Recv finds it, whether or not the receiving partition has started yet.
// A step moving N tensors between two tasks costs no round trip per tensor.
//
// Who may push: a peer learns this task's worker address and a ticket only
// by logging in over the (authenticated) control plane (Invite); every push
// carries its ticket, and pushes with a ticket this task did not give out,
// or revoked when the peer's control connection went, are dropped and
// logged. What an unauthenticated peer that reaches UCX's own sockets can
// still do is in docs/architecture.md.
//
// What a task holds: received tensors come from a pool of buffers reused
// across steps (common/buffer_pool.h). While more than `max_held_bytes` of
// them are alive, further large pushes are held back (back-pressure: the
// sender's push stays pending) for up to `hold_timeout`; a push that cannot
// fit, or waits longer, fails on both sides with RESOURCE_EXHAUSTED naming
// the tensor and the limit.
//
//   DataPlane plane(*ucx, timer, {}, [&](int64_t step, std::string key, StatusOr<Tensor> t) {
//     rendezvous.Deliver(step, key, std::move(t));
//   }, logger);
//   auto invitation = plane.Invite("/job:worker/replica:0/task:0");  // at that peer's login
//   ... on the peer: plane.Connect("/job:ps/replica:0/task:0", invitation);
//   plane.Push(task, step_id, key, tensor).then(...);
//
// Thread-safety: event-loop thread only (the thread of `ucx`).
#pragma once

#include <kj/async.h>
#include <kj/timer.h>

#include <functional>
#include <map>
#include <memory>
#include <string>

#include <spdlog/logger.h>

#include "common/buffer_pool.h"
#include "common/tensor.h"
#include "daemon/rpc/kj_status.h"
#include "daemon/transport/ucx_worker.h"
#include "schemas/transport.capnp.h"

namespace tfd {

class DataPlane {
 public:
  struct Options {
    // Received tensors alive at once before pushes are held back.
    size_t max_held_bytes = size_t{4} << 30;
    // How long a push may be held back before it fails.
    kj::Duration hold_timeout = 30 * kj::SECONDS;
    // What the receive pool keeps of buffers between steps.
    size_t max_cached_bytes = size_t{1} << 30;
    // Only tasks on this host (the same UcxWorker::host) get an endpoint.
    // Set when the control plane runs TLS: UCX 1.13 does not encrypt, and
    // between hosts tensors would cross the network in clear text
    // (docs/operations.md, "TLS").
    bool same_host_only = false;
  };
  // A tensor that arrived (or why one for (step, key) never will), on the
  // loop thread.
  using Deliver = std::function<void(int64_t step_id, const std::string& key, StatusOr<Tensor>)>;

  // What a peer needs to push here: this worker's address, its ticket, and
  // its host identity (UcxWorker::host).
  struct Invitation {
    std::string address;
    std::string ticket;
    std::string host;
  };

  // Counters since start, for status, metrics and benchmarks.
  struct Stats {
    uint64_t pushes_sent = 0, bytes_sent = 0;
    uint64_t pushes_received = 0, bytes_received = 0;
    uint64_t pushes_refused = 0;  // bad ticket, bad header, over the budget
    uint64_t held_back = 0;       // pushes that waited for room
    // Pushes to a same-host peer still unfinished when it went away: failed
    // at once, their buffers kept until UCX lets go (see Disconnect).
    uint64_t pushes_abandoned = 0;
    uint64_t step_messages_sent = 0, step_messages_received = 0;
    uint64_t step_messages_refused = 0;  // bad ticket, malformed, too large
    BufferPool::Stats pool;
  };

  DataPlane(UcxWorker& ucx, kj::Timer& timer, Options options, Deliver deliver,
            std::shared_ptr<spdlog::logger> logger);
  ~DataPlane();
  DataPlane(const DataPlane&) = delete;
  DataPlane& operator=(const DataPlane&) = delete;

  // A ticket for `task` (its name, under which traffic() counts what it
  // pushes; `where` it connected from goes into messages) and this worker's
  // address; valid until Revoke.
  Invitation Invite(const std::string& task, const std::string& where = "");
  void Revoke(const std::string& ticket);

  // An endpoint to `task` from the invitation it gave us: INVALID_ARGUMENT
  // for a malformed address, UNAVAILABLE when UCX cannot reach it,
  // FAILED_PRECONDITION for a task on another host under
  // Options::same_host_only. Replaces
  // an endpoint the task had (a task that restarted).
  //
  // A peer on another host gets an endpoint that UCX watches (a peer that
  // dies fails the pushes to it). UCX 1.13's shared-memory transports cannot
  // watch a peer, and UCX would fall back to TCP on loopback for such an
  // endpoint; so a peer on this host gets an unwatched endpoint over shared
  // memory and cross-memory attach, and the control plane watches it
  // instead: its connection going calls Disconnect. (With shared memory
  // excluded, UCX_TLS=tcp say, every peer is watched by UCX.)
  Status Connect(const std::string& task, const Invitation& invitation);
  // Fails the pushes still in flight to `task` with UNAVAILABLE and closes
  // its endpoint. A watched endpoint is closed at once and UCX returns every
  // buffer; an unwatched one is flushed in the background, and the buffers of
  // pushes the peer never took stay with UCX (pushes_abandoned counts them):
  // closing it by force could fault a peer that is still alive.
  void Disconnect(const std::string& task);
  bool Connected(const std::string& task) const;

  // Sends `tensor` to `task` for (step_id, key). Resolves once the bytes
  // have been taken (the buffer may then be reused); fails with UNAVAILABLE
  // naming the task when it cannot be reached or goes away, or with the
  // receiver's refusal. `tensor`'s buffer is kept alive until then.
  kj::Promise<void> Push(const std::string& task, int64_t step_id, const std::string& key,
                         const Tensor& tensor);

  // Step messages: small messages beside the pushes, under the same
  // tickets, for the step channel (daemon/distributed/step_channel.h).
  // `on_message` gets each one that carries a ticket this task gave out,
  // with the task the ticket was given to; `on_gone` hears that the
  // endpoint to a task went (Disconnect, or UCX reported it failed), so
  // that whoever waits for that task's answers stops waiting. Both run on
  // the loop, outside UCX's progress engine.
  using OnStepMessage = std::function<void(const std::string& from, proto::StepMessage::Reader)>;
  using OnPeerGone = std::function<void(const std::string& task, const Status& why)>;
  void SetStepHandlers(OnStepMessage on_message, OnPeerGone on_gone);
  // Sends a step message to `task`; `fill` writes all but the ticket.
  // UNAVAILABLE when there is no working endpoint to it. Nothing says when
  // it arrived: the answer does, or the endpoint's going.
  Status SendStepMessage(const std::string& task,
                         const std::function<void(proto::StepMessage::Builder)>& fill);

  Stats stats() const;
  // Bytes pushed to and received from each task since start, by task name
  // (Push's `task`, Invite's `task`): a map that grows with the tasks of
  // the cluster, not with connections.
  struct Traffic {
    uint64_t bytes_sent = 0, bytes_received = 0;
  };
  const std::map<std::string, Traffic>& traffic() const { return traffic_; }
  const std::string& transports() const { return ucx_.transports(); }
  kj::Timer& timer() { return timer_; }

 private:
  struct Peer;
  struct Incoming;
  struct SendOp;

  static ucs_status_t OnMessage(void* arg, const void* header, size_t header_length, void* data,
                                size_t length, const ucp_am_recv_param_t* param);
  static void OnEndpointError(void* arg, ucp_ep_h ep, ucs_status_t status);
  static ucs_status_t OnStepMessageArrived(void* arg, const void* header, size_t header_length,
                                           void* data, size_t length,
                                           const ucp_am_recv_param_t* param);
  ucs_status_t ReceiveStepMessage(const void* data, size_t length,
                                  const ucp_am_recv_param_t* param);
  void PeerGone(const std::string& task, const Status& why);
  ucs_status_t Receive(const void* header, size_t header_length, void* data, size_t length,
                       const ucp_am_recv_param_t* param);
  // Starts the receive of a held-back or new rendezvous push into its buffer.
  void StartReceive(kj::Own<Incoming> in);
  // Hands a received tensor (or why it failed) to `deliver_`.
  void Finish(kj::Own<Incoming> in, ucs_status_t status);
  void RetryHeldBack();
  // Counts and logs (up to a point) a refused push, or step message.
  void Refuse(const std::string& why, bool step_message = false);

  UcxWorker& ucx_;
  kj::Timer& timer_;
  Options options_;
  Deliver deliver_;
  OnStepMessage on_step_message_;
  OnPeerGone on_peer_gone_;
  std::shared_ptr<spdlog::logger> logger_;
  LogTaskErrors errors_;
  kj::TaskSet tasks_;
  BufferPool pool_;
  struct Invited {
    std::string task;
    std::string label;  // task and where it connected from, for messages
  };
  std::map<std::string, Invited> tickets_;  // by ticket
  std::map<std::string, Traffic> traffic_;  // by task
  std::map<std::string, kj::Own<Peer>> peers_;  // by task
  kj::Vector<kj::Own<Incoming>> held_back_;
  bool retrying_ = false;  // a retry of the held-back pushes is scheduled
  Stats stats_;
  uint64_t refusals_logged_ = 0;
};

}  // namespace tfd
