// UcxLink: the data plane's link to a task on this host, over UCX's posix
// shared memory (--data-plane-transports=shm; daemon/transport/ucx_worker.h).
//
// A push is one active message: the push header (with the ticket the peer
// gave this task at login) and the tensor's bytes, sent from the tensor's
// own buffer. UCX sends small tensors eagerly and large ones by rendezvous,
// where the receiver pulls the bytes into a buffer of its own.
//
// UCX 1.13's shared-memory transports cannot tell when a peer dies, so the
// endpoint is not watched by UCX: the control plane watches the peer (its
// connection dropping closes this link). Closing flushes the endpoint in the
// background; buffers of pushes the peer never took stay with UCX
// (Stats::pushes_abandoned), since forcing the endpoint closed could fault a
// peer that is still alive. For the same reason a tensor whose sender dies
// halfway through its rendezvous is never finished: the buffer it was
// landing in stays held until this task restarts (docs/cli.md says so).
//
//   TFD_ASSIGN_OR_RETURN(auto link, UcxLink::Connect(ucx, sink, task, address, ticket, logger));
//   link->Push(step, key, tensor).then(...);
//
// Thread-safety: event-loop thread only (the thread of `ucx`).
#pragma once

#include <kj/async.h>

#include <memory>
#include <set>
#include <string>

#include <spdlog/logger.h>

#include "daemon/transport/link.h"
#include "daemon/transport/ucx_worker.h"

namespace tfd {

class UcxLink final : public Link {
 public:
  // An endpoint to the worker at `address`, pushing with `ticket`.
  // UNAVAILABLE when UCX cannot make one.
  static StatusOr<std::unique_ptr<UcxLink>> Connect(UcxWorker& ucx, PlaneSink& sink,
                                                    std::string task, const std::string& address,
                                                    std::string ticket,
                                                    std::shared_ptr<spdlog::logger> logger);
  ~UcxLink() override;

  kj::Promise<void> Push(int64_t step_id, const std::string& key, const Tensor& tensor) override;
  Status SendStepMessage(const StepMessage& message) override;
  Status failure() const override;
  void Close(const Status& why) override;
  std::string kind() const override { return "UCX shared memory"; }

  // Use Connect.
  UcxLink(UcxWorker& ucx, PlaneSink& sink, std::string task, std::string ticket);

 private:
  struct SendOp;
  void LogLanes(const std::shared_ptr<spdlog::logger>& logger) const;

  UcxWorker& ucx_;
  PlaneSink& sink_;
  const std::string task_;
  const std::string ticket_;  // the peer's, carried by every push to it
  ucp_ep_h ep_ = nullptr;
  Status failure_;
  std::set<SendOp*> sending_;  // pushes UCX has not finished
};

}  // namespace tfd
