// StreamReceiver: the task's side of one data-plane stream another task
// opened and this task welcomed (daemon/transport/stream_frames.h). The
// stream's opener was authenticated at its hello, so everything on it is
// that task's: pushes and step messages need no ticket.
//
// It reads frames until the stream ends, and never stops reading on account
// of memory, so step messages are never held up behind a large tensor:
// - a push (at most the welcome's eagerBytes) is read into a new tensor and
//   delivered;
// - an offer is answered with a grant once the ReceiveRoom has a buffer for
//   it (or with the room's refusal, which also reaches the rendezvous as
//   the tensor's error); its data frame is then read straight into that
//   buffer, which becomes the tensor;
// - a step message is handed to the sink as from the stream's task.
// It also writes back on the stream: grants, and step messages for the
// opener (SendStepMessage: the answers to the runs that came on it).
// A frame the opener may not send, a header outside its kind's limits, a
// payload that does not match its header, data for an offer never granted,
// or more than kMaxOffers offers waiting end the stream; the reason is
// returned (for the task's log) and everything granted is let go.
//
// Over a ReadAheadStream (what a task's server hands the data plane), step
// frames that arrived whole are decoded where they lie in its buffer: a
// step costs a `run` and a `done`, and their frames were most of a small
// partition's promises and allocations on the way in.
//
//   StreamReceiver receiver(room, sink, task, kj::mv(stream), tls ? nullptr : fd, eager_bytes);
//   receiver.Run().then([](Status why) { ... log why unless OK ... });
//   receiver.SendStepMessage(StepMessage::Done(handle, step, OkStatus()));
//
// Thread-safety: event-loop thread only.
#pragma once

#include <kj/async-io.h>

#include <map>
#include <set>
#include <memory>
#include <string>

#include "daemon/rpc/kj_status.h"
#include "daemon/rpc/read_ahead_stream.h"
#include "daemon/transport/frame_writer.h"
#include "daemon/transport/link.h"
#include "daemon/transport/push_header.h"
#include "daemon/transport/receive_room.h"
#include "daemon/transport/step_messages.h"
#include "daemon/transport/stream_frames.h"

namespace tfd {

class StreamReceiver {
 public:
  // Offers one stream may have waiting for room at once.
  static constexpr size_t kMaxOffers = 4096;

  // `socket`: the plain socket under `stream`, for writes that skip the
  // event loop (FrameWriter); null when the stream is TLS.
  StreamReceiver(ReceiveRoom& room, PlaneSink& sink, std::string task,
                 kj::Own<kj::AsyncIoStream> stream, kj::Maybe<int> socket, uint64_t eager_bytes);
  ~StreamReceiver();
  StreamReceiver(const StreamReceiver&) = delete;
  StreamReceiver& operator=(const StreamReceiver&) = delete;

  // Reads until the stream ends: OK when the opener closed it between
  // frames, else why it was ended.
  kj::Promise<Status> Run();
  const std::string& task() const { return task_; }
  // Sends `message` to the stream's opener. UNAVAILABLE once the stream
  // broke; INVALID_ARGUMENT when it is too large (step_messages.h).
  Status SendStepMessage(const StepMessage& message);

 private:
  struct Granted {
    PushHeader header;
    std::shared_ptr<Buffer> buffer;
  };

  kj::Promise<Status> Next();
  // Hands a step frame that lies whole in ahead_'s buffer to the sink and
  // takes it from the buffer; false (nothing taken) for anything else.
  bool TakeBufferedStep();
  kj::Promise<Status> OnFrame(stream::Frame frame);
  kj::Promise<Status> ReadPush(const stream::FrameHeader& header, PushHeader push);
  Status Offer(const stream::FrameHeader& header, PushHeader push);
  kj::Promise<Status> ReadData(const stream::FrameHeader& header);
  void Grant(uint64_t tag, PushHeader push, StatusOr<std::shared_ptr<Buffer>> room);
  // The tensor a payload makes, delivered to the sink.
  void Deliver(const PushHeader& push, StatusOr<Tensor> tensor, uint64_t bytes);

  ReceiveRoom& room_;
  PlaneSink& sink_;
  const std::string task_;
  const uint64_t eager_bytes_;
  kj::Own<kj::AsyncIoStream> stream_;
  ReadAheadStream* ahead_;  // stream_, when it reads ahead; else null
  std::map<uint64_t, Granted> granted_;  // by tag, until its data frame
  std::set<uint64_t> waiting_;           // tags of offers waiting for room
  LogTaskErrors errors_;
  kj::TaskSet reserving_;  // offers waiting for room
  FrameWriter writer_;     // grants and step messages
};

}  // namespace tfd
