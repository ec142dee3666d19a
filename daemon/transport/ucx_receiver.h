// UcxReceiver: the receiving side of the data plane's shared-memory links:
// the UCX worker's handlers for pushed tensors and step messages.
//
// Who may push here: a process that can attach this task's shared memory
// (tfd's own user: UCX's posix segments are created mode 0600 and reached
// through /proc/PID/fd, SysV segments are not used) and that carries a
// ticket this task gave out at a login and has not revoked. Everything else
// is refused, counted and logged (up to a point) before anything is
// allocated: a header is parsed within fixed limits, its shape must account
// for exactly the bytes that come with it, and a tensor's buffer is taken
// from the ReceiveRoom (so a rendezvous receive waits for room).
//
//   UcxReceiver receiver(ucx, room, sink, [&](const std::string& t) { return Lookup(t); });
//
// Thread-safety: event-loop thread only (the thread of `ucx`).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "daemon/rpc/kj_status.h"
#include "daemon/transport/link.h"
#include "daemon/transport/receive_room.h"
#include "daemon/transport/ucx_worker.h"

namespace tfd {

class UcxReceiver {
 public:
  // The task a ticket was given to, or nullopt for a ticket this task did
  // not give out (or revoked).
  using TicketOwner = std::function<std::optional<std::string>(const std::string& ticket)>;

  UcxReceiver(UcxWorker& ucx, kj::Timer& timer, ReceiveRoom& room, PlaneSink& sink,
              TicketOwner owner);
  ~UcxReceiver();
  UcxReceiver(const UcxReceiver&) = delete;
  UcxReceiver& operator=(const UcxReceiver&) = delete;

 private:
  struct Incoming;

  static ucs_status_t OnPush(void* arg, const void* header, size_t header_length, void* data,
                             size_t length, const ucp_am_recv_param_t* param);
  static ucs_status_t OnStep(void* arg, const void* header, size_t header_length, void* data,
                             size_t length, const ucp_am_recv_param_t* param);
  ucs_status_t ReceivePush(const void* header, size_t header_length, void* data, size_t length,
                           bool rendezvous);
  ucs_status_t ReceiveStep(const void* data, size_t length, bool rendezvous);
  void ReceiveEager(const Incoming& in, const void* data);
  // Once the room gave a buffer: pulls the bytes into it.
  void StartReceive(kj::Own<Incoming> in, std::shared_ptr<Buffer> buffer);
  void Finish(kj::Own<Incoming> in, ucs_status_t status);

  UcxWorker& ucx_;
  kj::Timer& timer_;
  ReceiveRoom& room_;
  PlaneSink& sink_;
  TicketOwner owner_;
  LogTaskErrors errors_;
  kj::TaskSet waiting_;  // rendezvous receives waiting for room
};

}  // namespace tfd
