// Step messages: the wire of the step channel (daemon/distributed/
// step_channel.h), beside the tensor pushes (push_header.h) on both links
// of the data plane. A master sends `run` to start a partition it
// registered on a task and `cancel` when it gives up on the step; the task
// answers `done` with how the partition ended. Each concerns one step of
// one partition, named by the handle registerGraph answered with.
//
// The wire format is schemas/transport.capnp's StepMessage: over shared
// memory one UCX active message with no header, carrying the ticket of the
// sender's invitation; on a stream the meta of a step frame, without one
// (the stream was authenticated when it opened). Both links and both
// receivers encode and decode here, and nowhere else.
//
// Decoding never trusts the sender: at most kMaxStepMessageBytes, read
// within fixed reader limits, and only the kinds this tfd sends. What the
// messages mean (who may run which handle, what an answer settles) is the
// step channel's.
//
//   auto words = EncodeStepMessage(StepMessage::Run(handle, step_id, 0, false), ticket);
//   ... on the receiver:
//   TFD_ASSIGN_OR_RETURN(ReceivedStep in, DecodeStepMessage(*words));
//   if (in.message.kind == StepMessage::Kind::kRun) ...
//
// Thread-safety: pure functions.
#pragma once

#include <capnp/common.h>
#include <kj/array.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/status.h"
#include "common/step_stats.h"

namespace tfd {

struct StepMessage {
  enum class Kind { kRun, kDone, kCancel };

  static StepMessage Run(uint64_t graph, int64_t step_id, int64_t timeout_ms, bool trace);
  static StepMessage Done(uint64_t graph, int64_t step_id, Status status, StepStats stats = {});
  static StepMessage Cancel(uint64_t graph, int64_t step_id);

  Kind kind = Kind::kCancel;
  uint64_t graph = 0;  // the partition's handle on the step channel
  int64_t step_id = 0;
  // kRun: 0 for the task's --step-timeout; `trace` asks for the nodes.
  int64_t timeout_ms = 0;
  bool trace = false;
  // kDone: how the partition ended, and its nodes when the run asked.
  Status status;
  StepStats stats;
};

// A message as it arrived, with the ticket it carried (empty on a stream).
struct ReceivedStep {
  std::string ticket;
  StepMessage message;
};

// A step message is well under a kilobyte, or a traced partition's nodes
// (about 150 bytes each): anything longer is refused unread.
inline constexpr size_t kMaxStepMessageBytes = 8 << 20;

// `message` as whole words, carrying `ticket` when it is not empty.
// INVALID_ARGUMENT when that comes to more than kMaxStepMessageBytes.
StatusOr<kj::Array<capnp::word>> EncodeStepMessage(const StepMessage& message,
                                                   const std::string& ticket);

// INVALID_ARGUMENT for more than kMaxStepMessageBytes, a malformed message
// or one of no kind this tfd sends. A `done` whose code this tfd does not
// know is INTERNAL with the sender's message: an error all the same, never
// success. `words` must be word-aligned.
StatusOr<ReceivedStep> DecodeStepMessage(kj::ArrayPtr<const capnp::word> words);

}  // namespace tfd
