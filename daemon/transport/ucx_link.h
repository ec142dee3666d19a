// UcxLink: the data plane's link to a task on this host, over UCX's shared
// memory (posix shared memory for messages, cross-memory attach for large
// tensors; daemon/transport/ucx_worker.h).
//
// A push is one active message: the push header (with the ticket the peer
// gave this task at login) and the tensor's bytes, sent from the tensor's
// own buffer. UCX sends small tensors eagerly and large ones by rendezvous,
// where the receiver pulls the bytes into a buffer of its own.
//
// UCX watches the neighbour (its shared-memory transports check that the
// peer's process lives, once the worker enables MM_ERROR_HANDLING): a peer
// that dies fails the link (PlaneSink::LinkFailed) and its transfers, on
// both sides, rather than aborting this task in UCX's own assertions when a
// cross-memory read finds the process gone. The control plane watches the
// peer too (its connection dropping closes this link). Closing flushes a
// live endpoint in the background, and forces a failed one closed.
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
  Status SendStepMessage(const FillStep& fill) override;
  Status failure() const override;
  void Close(const Status& why) override;
  std::string kind() const override { return "UCX shared memory"; }

  // Use Connect.
  UcxLink(UcxWorker& ucx, PlaneSink& sink, std::string task, std::string ticket);

 private:
  struct SendOp;
  void LogLanes(const std::shared_ptr<spdlog::logger>& logger) const;
  // UCX's error handler; `arg` is the link's id (see ucx_link.cc).
  static void OnEndpointError(void* arg, ucp_ep_h ep, ucs_status_t status);

  UcxWorker& ucx_;
  PlaneSink& sink_;
  const std::string task_;
  const std::string ticket_;  // the peer's, carried by every push to it
  const uint64_t id_;  // how UCX's error handler finds this link
  ucp_ep_h ep_ = nullptr;
  bool ep_failed_ = false;  // UCX reported the endpoint failed: close by force
  Status failure_;
  std::set<SendOp*> sending_;  // pushes UCX has not finished
};

}  // namespace tfd
