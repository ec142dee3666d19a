// Link: one way the data plane carries this task's pushes and step messages
// to one peer task — UCX over shared memory to a task on this host
// (ucx_link.h), or a stream to any other (stream_link.h). The DataPlane
// picks one per peer and otherwise treats them alike. PlaneSink is what a
// link, and each receiving side, tells its DataPlane.
//
// Thread-safety: event-loop thread only.
#pragma once

#include <capnp/common.h>
#include <kj/array.h>
#include <kj/async.h>

#include <cstdint>
#include <string>

#include "common/status.h"
#include "common/tensor.h"
#include "daemon/transport/step_messages.h"

namespace tfd {

// The DataPlane's books and hand-offs, as links and receivers see them.
class PlaneSink {
 public:
  // noexcept(false), as kj's: implementations hold kj task sets.
  virtual ~PlaneSink() noexcept(false) = default;
  // A push to `task` was taken (its buffer may be reused).
  virtual void Sent(const std::string& task, uint64_t bytes) = 0;
  virtual void StepMessageSent() = 0;
  // Pushes a closing link failed while the transport still held their
  // buffers (shared memory to a peer that went mid-push).
  virtual void Abandoned(uint64_t pushes) = 0;
  // A tensor (or why it never will be one) from `task`, for the rendezvous.
  virtual void Received(const std::string& task, int64_t step_id, const std::string& key,
                        StatusOr<Tensor> tensor, uint64_t bytes) = 0;
  // A step message from `task` (authenticated by its link, decoded by
  // step_messages.h).
  virtual void StepReceived(const std::string& task, const StepMessage& message) = 0;
  // Something received was refused: counted, and logged up to a point.
  virtual void Refused(const std::string& why, bool step_message) = 0;
  // The link to `task` failed: whoever waits for that task stops waiting.
  virtual void LinkFailed(const std::string& task, const Status& why) = 0;
};

class Link {
 public:
  virtual ~Link() noexcept(false) = default;
  // Sends `tensor` for (step_id, key); resolves once the bytes are taken
  // (the tensor's buffer is kept alive until then); rejects with
  // UNAVAILABLE when the peer cannot be reached or goes, or with the peer's
  // refusal.
  virtual kj::Promise<void> Push(int64_t step_id, const std::string& key,
                                 const Tensor& tensor) = 0;
  // Sends `message` (with this link's ticket, where it has one);
  // UNAVAILABLE when the link does not work, INVALID_ARGUMENT when the
  // message is too large (step_messages.h).
  virtual Status SendStepMessage(const StepMessage& message) = 0;
  // OK while the link works; why it failed otherwise.
  virtual Status failure() const = 0;
  // Fails what is in flight with `why` and lets the peer go.
  virtual void Close(const Status& why) = 0;
  // "UCX shared memory", "stream (TLS)": for logs and status.
  virtual std::string kind() const = 0;
};

}  // namespace tfd
