// StreamLink: the data plane's link to a task that shares no memory with
// this one: a stream (daemon/transport/stream_frames.h) this task opened to
// the peer's own port, after logging in there, and the peer welcomed.
//
// A tensor up to the welcome's eagerBytes goes in one push frame, from the
// tensor's buffer. A larger one is offered first (its header and size); the
// peer grants room when its --max-received-bytes allows, and the bytes then
// follow in a data frame, straight from the tensor's buffer. A push resolves
// once its bytes are written to the socket.
//
// What comes back on the stream: grants, and step messages from the peer
// (the `done`s that answer the `run`s this task sent on it), handed to the
// sink as from the peer; the stream is read ahead so that a step frame that
// arrived whole is decoded where it lies (stream_steps.h).
//
// The link fails, and says so to its PlaneSink once, when the stream breaks
// or the peer closes it; every push in flight then fails with UNAVAILABLE
// naming the peer.
//
//   auto link = std::make_unique<StreamLink>(sink, task, kj::mv(stream), welcome, tls);
//   link->Push(step, key, tensor).then(...);
//
// Thread-safety: event-loop thread only.
#pragma once

#include <kj/async-io.h>

#include <map>
#include <memory>
#include <string>

#include "daemon/rpc/kj_status.h"
#include "daemon/rpc/read_ahead_stream.h"
#include "daemon/transport/frame_writer.h"
#include "daemon/transport/link.h"
#include "daemon/transport/stream_frames.h"

namespace tfd {

class StreamLink final : public Link {
 public:
  // `stream` is open and welcomed; `tls` says whether it is encrypted (for
  // logs and status).
  StreamLink(PlaneSink& sink, std::string task, kj::Own<kj::AsyncIoStream> stream,
             const stream::Welcome& welcome, bool tls);
  ~StreamLink() override;

  kj::Promise<void> Push(int64_t step_id, const std::string& key, const Tensor& tensor) override;
  Status SendStepMessage(const StepMessage& message) override;
  Status failure() const override { return failure_; }
  void Close(const Status& why) override;
  std::string kind() const override { return tls_ ? "stream (TLS)" : "stream"; }

 private:
  // A tensor offered and not yet granted.
  struct Offer {
    uint64_t bytes = 0;
    kj::ArrayPtr<const kj::byte> payload;
    std::shared_ptr<const void> keep;  // what payload points into
    kj::Own<kj::PromiseFulfiller<void>> done;
  };
  // What a push sends: the payload and what keeps it alive.
  struct Payload {
    kj::ArrayPtr<const kj::byte> bytes;
    std::shared_ptr<const void> keep;
  };
  static Payload PayloadOf(const Tensor& tensor);

  // Reads what the peer sends back (grants, step messages) until the
  // stream ends.
  kj::Promise<void> ReadBack();
  kj::Promise<void> OnFrame(stream::Frame frame);
  void OnGrant(uint64_t tag, const Status& granted);
  // The link no longer works: fails what is in flight, tells the sink once.
  void Fail(const Status& why);

  PlaneSink& sink_;
  const std::string task_;
  const uint64_t eager_bytes_;
  const bool tls_;
  kj::Own<ReadAheadStream> stream_;
  Status failure_;
  std::map<uint64_t, Offer> offers_;  // by tag
  // Granted offers whose data frame is queued or being written, by tag.
  std::map<uint64_t, kj::Own<kj::PromiseFulfiller<void>>> writing_;
  uint64_t next_tag_ = 1;
  LogTaskErrors errors_;
  kj::TaskSet sending_;  // data frames of granted offers
  FrameWriter writer_;
  kj::Promise<void> reading_ = nullptr;  // last: cancelled first
};

}  // namespace tfd
