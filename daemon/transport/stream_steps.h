// Step messages on a data-plane stream, the same at both ends: the task
// reads the `run`s and `cancel`s its opener sends and writes the `done`s
// back; the opener (StreamLink) does the opposite (stream_frames.h).
//
// Each step is a small frame that one read(2) usually brings whole:
// TakeBufferedStep decodes it where it lies in a ReadAheadStream's buffer,
// which saves the promises and allocations of reading it as a frame
// (stream::ReadFrame), most of a small partition's cost on the way in.
//
//   while (auto step = TakeBufferedStep(ahead, stream::Side::kOpener)) {
//     HandOnStep(sink, task, std::move(*step));
//   }
//   ... then read the next frame as usual (ReadFrame), or wait for bytes
//   TFD_RETURN_IF_ERROR(PostStepFrame(writer, StepMessage::Done(handle, step, OkStatus())));
//
// Thread-safety: the stream's event-loop thread.
#pragma once

#include <optional>
#include <string>

#include "common/status.h"
#include "daemon/rpc/read_ahead_stream.h"
#include "daemon/transport/frame_writer.h"
#include "daemon/transport/link.h"
#include "daemon/transport/step_messages.h"
#include "daemon/transport/stream_frames.h"

namespace tfd {

// When `in`'s buffer starts with a whole step frame that `from` may send:
// takes it from the buffer and returns its message decoded (or why it could
// not be: a malformed message, which leaves the stream's framing intact).
// Otherwise nullopt, nothing taken: fewer bytes than a frame, another kind,
// or a bad header, which is left for ReadFrame to end the stream with.
std::optional<StatusOr<ReceivedStep>> TakeBufferedStep(ReadAheadStream& in, stream::Side from);

// A step message read from `from`'s stream, to `sink`: handed on, or
// refused (counted and logged) when it did not decode.
void HandOnStep(PlaneSink& sink, const std::string& from, StatusOr<ReceivedStep> received);

// Queues `message` as a step frame on `writer` (no ticket: the stream was
// authenticated when it opened). The writer's failure when it failed;
// INVALID_ARGUMENT when the message is too large (step_messages.h).
Status PostStepFrame(FrameWriter& writer, const StepMessage& message);

}  // namespace tfd
