// Step frames taken where they lie in a ReadAheadStream's buffer: both ends
// of a data-plane stream read step messages (the task the `run`s and
// `cancel`s its opener sends, the opener the `done`s that answer them), and
// each step is a small frame that one read(2) usually brings whole. Decoding
// it in place saves the promises and allocations of reading it as a frame
// (stream::ReadFrame), which were most of a small partition's cost on the
// way in.
//
//   while (auto step = TakeBufferedStep(ahead, stream::Side::kOpener)) {
//     if (step->ok()) sink.StepReceived(task, (*step)->message); else refuse(step->status());
//   }
//   ... then read the next frame as usual (ReadFrame), or wait for bytes
//
// Thread-safety: the stream's event-loop thread.
#pragma once

#include <optional>

#include "common/status.h"
#include "daemon/rpc/read_ahead_stream.h"
#include "daemon/transport/step_messages.h"
#include "daemon/transport/stream_frames.h"

namespace tfd {

// When `in`'s buffer starts with a whole step frame that `from` may send:
// takes it from the buffer and returns its message decoded (or why it could
// not be: a malformed message, which leaves the stream's framing intact).
// Otherwise nullopt, nothing taken: fewer bytes than a frame, another kind,
// or a bad header, which is left for ReadFrame to end the stream with.
std::optional<StatusOr<ReceivedStep>> TakeBufferedStep(ReadAheadStream& in, stream::Side from);

}  // namespace tfd
