// DataPlane: tensors pushed from the task that produces them to the task
// that consumes them, beside the Cap'n Proto control plane, and the step
// messages of the step channel (step_messages.h; their meaning:
// daemon/distributed/step_channel.h).
//
// Push, not pull: a _Send hands its tensor to Push as soon as it is made;
// the bytes go from the tensor's own buffer into a buffer on the receiver
// that becomes the receiver's tensor, and `deliver` puts it into the
// receiver's rendezvous, where the _Recv finds it whether or not the
// receiving partition has started. A step moving N tensors between two
// tasks costs no round trip per tensor.
//
// Each peer is reached over one link (daemon/transport/link.h):
// - by default every task over a stream (stream_link.h): a connection to
//   the task's own listening port — TLS when the cluster runs TLS — that
//   presents the same credential as a login before a frame is read.
// - with --data-plane-transports=shm, a task on this host (same kernel and
//   IPC namespace) over UCX's posix shared memory (ucx_link.h), private to
//   tfd's user. UCX opens no socket: its TCP and SysV transports are never
//   enabled (ucx_worker.h).
//
// Who may push here: over shared memory, a process of tfd's user holding a
// ticket this task gave at a login and has not revoked (Invite, Revoke);
// on a stream, the task whose hello the task server authenticated
// (ServeStream). Everything else is refused, counted and logged.
//
// What a task holds: received tensors come from a ReceiveRoom; while more
// than `max_held_bytes` of them are alive, large pushes wait for room (the
// sender's push stays pending) for up to `hold_timeout`, then fail on both
// sides with RESOURCE_EXHAUSTED naming the tensor and the limit.
//
//   DataPlane plane(ucx.get(), timer, {}, [&](int64_t step, std::string key, StatusOr<Tensor> t) {
//     rendezvous.Deliver(step, key, std::move(t));
//   }, logger);
//   auto invitation = plane.Invite("/job:worker/replica:0/task:0");  // at that peer's login
//   ... on the peer: if (plane.SharesMemory(invitation)) plane.ConnectShared(task, invitation);
//                    else plane.ConnectStream(task, kj::mv(socket), hello, tls);
//   plane.Push(task, step_id, key, tensor).then(...);
//
// Thread-safety: event-loop thread only.
#pragma once

#include <kj/async-io.h>
#include <kj/timer.h>

#include <functional>
#include <map>
#include <memory>
#include <string>

#include <spdlog/logger.h>

#include "common/buffer_pool.h"
#include "common/tensor.h"
#include "daemon/rpc/kj_status.h"
#include "daemon/transport/link.h"
#include "daemon/transport/receive_room.h"
#include "daemon/transport/step_messages.h"
#include "daemon/transport/stream_frames.h"

namespace tfd {

class UcxWorker;
class UcxReceiver;
class StreamReceiver;

class DataPlane : private PlaneSink {
 public:
  struct Options {
    // Received tensors alive at once before pushes are held back.
    size_t max_held_bytes = size_t{4} << 30;
    // How long a push may be held back before it fails.
    kj::Duration hold_timeout = 30 * kj::SECONDS;
    // What the receive pool keeps of buffers between steps.
    size_t max_cached_bytes = size_t{1} << 30;
    // Tensors up to this size are pushed inline on a stream; larger ones
    // are offered and wait for room (stream_frames.h).
    uint64_t eager_bytes = stream::kDefaultEagerBytes;
  };
  // A tensor that arrived (or why one for (step, key) never will), on the
  // loop thread.
  using Deliver = std::function<void(int64_t step_id, const std::string& key, StatusOr<Tensor>)>;

  // What a peer needs to push here over shared memory: this worker's UCX
  // address, its ticket, and its host identity (UcxWorker::host).
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
    // at once, their buffers kept until UCX lets go (see UcxLink).
    uint64_t pushes_abandoned = 0;
    uint64_t step_messages_sent = 0, step_messages_received = 0;
    uint64_t step_messages_refused = 0;  // bad ticket, malformed, too large
    uint64_t streams_served = 0;         // streams other tasks opened here, open now
    BufferPool::Stats pool;
  };

  // `ucx` null: no shared memory (the default --data-plane-transports=stream, or UCX
  // would not start); every peer is reached over a stream.
  DataPlane(UcxWorker* ucx, kj::Timer& timer, Options options, Deliver deliver,
            std::shared_ptr<spdlog::logger> logger);
  ~DataPlane();
  DataPlane(const DataPlane&) = delete;
  DataPlane& operator=(const DataPlane&) = delete;

  // A ticket for `task`'s pushes over shared memory (its name, under which
  // traffic() counts what it pushes; `where` it connected from goes into
  // messages) and this worker's address; valid until Revoke.
  Invitation Invite(const std::string& task, const std::string& where = "");
  void Revoke(const std::string& ticket);

  // Whether the task that gave `invitation` is reached over shared memory:
  // both have UCX and run on this host.
  bool SharesMemory(const Invitation& invitation) const;
  // A shared-memory link to `task` (replacing any link it had: a task that
  // restarted). INVALID_ARGUMENT for a malformed invitation, UNAVAILABLE
  // when UCX cannot reach it.
  Status ConnectShared(const std::string& task, const Invitation& invitation);
  // A stream link to `task` over `stream`, which the caller opened to the
  // task's port (and wrapped in TLS when the cluster runs TLS; `tls` says
  // so): sends `hello`, and once the task welcomes it, replaces any link
  // `task` had. Rejects with the task's refusal (UNAUTHENTICATED, ...).
  kj::Promise<void> ConnectStream(const std::string& task, kj::Own<kj::AsyncIoStream> stream,
                                  const stream::Hello& hello, bool tls);
  // Serves a stream `task` opened to this task, whose hello the caller has
  // authenticated: welcomes it and reads it until it ends; resolves with
  // why it ended (OK when the opener closed it). `tls` says whether it is
  // encrypted (else its getFd() is the plain socket, written directly).
  kj::Promise<Status> ServeStream(const std::string& task, kj::Own<kj::AsyncIoStream> stream,
                                  bool tls);
  // The welcome ServeStream sends (for a caller that refuses instead).
  stream::Welcome Welcome() const;

  // Fails what is in flight to `task` with UNAVAILABLE and lets its link go.
  void Disconnect(const std::string& task);
  bool Connected(const std::string& task) const;
  // How `task` is reached ("UCX shared memory", "stream (TLS)"), "" if not.
  std::string LinkKind(const std::string& task) const;

  // Sends `tensor` to `task` for (step_id, key). Resolves once the bytes
  // have been taken (the buffer may then be reused); fails with UNAVAILABLE
  // naming the task when it cannot be reached or goes away, or with the
  // receiver's refusal. `tensor`'s buffer is kept alive until then.
  kj::Promise<void> Push(const std::string& task, int64_t step_id, const std::string& key,
                         const Tensor& tensor);

  // Step messages (step_messages.h). `on_message` gets each one from an
  // authenticated peer, decoded, with that peer's task; `on_gone` hears
  // that the link to a task went (Disconnect, or it failed), so that
  // whoever waits for that task's answers stops waiting. Both run on the
  // loop, outside any transport's callbacks.
  using OnStepMessage = std::function<void(const std::string& from, const StepMessage&)>;
  using OnPeerGone = std::function<void(const std::string& task, const Status& why)>;
  void SetStepHandlers(OnStepMessage on_message, OnPeerGone on_gone);
  // Told when a link fails by itself (a stream broke), after on_gone: the
  // owner of the control connections forgets the task, so the next call
  // reaches it afresh.
  void SetOnLinkLost(std::function<void(const std::string& task)> on_lost);
  // Sends `message` to `task`. UNAVAILABLE when there is no working link
  // to it; INVALID_ARGUMENT when it is too large (kMaxStepMessageBytes).
  Status SendStepMessage(const std::string& task, const StepMessage& message);
  // Sends `message` back on the stream `task` opened to this task, the way
  // its step messages come, so that an answer travels on the connection of
  // its request (stream_frames.h); without such a stream (shared memory),
  // or once it broke, as SendStepMessage.
  Status Reply(const std::string& task, const StepMessage& message);
  // Whether Reply reaches `task` over a stream it opened here, which this
  // task serves now (no link of its own needed).
  bool RepliesTo(const std::string& task) const { return served_.count(task) != 0; }

  Stats stats() const;
  // Bytes pushed to and received from each task since start, by task name
  // (Push's `task`, Invite's `task`, a stream's task): a map that grows
  // with the tasks of the cluster, not with connections.
  struct Traffic {
    uint64_t bytes_sent = 0, bytes_received = 0;
  };
  const std::map<std::string, Traffic>& traffic() const { return traffic_; }
  // What carries tensors: "shared memory (UCX) and streams", or "streams".
  std::string transports() const;
  kj::Timer& timer() { return timer_; }

 private:
  struct Invited {
    std::string task;
    std::string label;  // task and where it connected from, for messages
  };

  // PlaneSink
  void Sent(const std::string& task, uint64_t bytes) override;
  void StepMessageSent() override;
  void Abandoned(uint64_t pushes) override;
  void Received(const std::string& task, int64_t step_id, const std::string& key,
                StatusOr<Tensor> tensor, uint64_t bytes) override;
  void StepReceived(const std::string& task, const StepMessage& message) override;
  void Refused(const std::string& why, bool step_message) override;
  void LinkFailed(const std::string& task, const Status& why) override;

  PlaneSink& sink() { return *this; }
  Link* Find(const std::string& task) const;
  void SetLink(const std::string& task, std::unique_ptr<Link> link);
  void PeerGone(const std::string& task, const Status& why);

  UcxWorker* ucx_;  // null: streams only
  kj::Timer& timer_;
  Options options_;
  Deliver deliver_;
  OnStepMessage on_step_message_;
  OnPeerGone on_peer_gone_;
  std::function<void(const std::string&)> on_link_lost_;
  std::shared_ptr<spdlog::logger> logger_;
  ReceiveRoom room_;
  std::map<std::string, Invited> tickets_;  // by ticket
  std::map<std::string, Traffic> traffic_;  // by task
  std::map<std::string, std::unique_ptr<Link>> links_;  // by task
  // The stream each task opened here last, while it is served (Reply).
  std::map<std::string, StreamReceiver*> served_;
  Stats stats_;
  uint64_t refusals_logged_ = 0;
  LogTaskErrors errors_;
  kj::TaskSet deferred_;  // link failures handled outside the link's callbacks
  std::unique_ptr<UcxReceiver> ucx_receiver_;  // with ucx_
};

}  // namespace tfd
