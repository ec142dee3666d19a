// FrameWriter: the frames one side of a data-plane stream writes, one at a
// time and in the order they were queued (a kj stream takes one write at a
// time). Each frame's promise resolves once its bytes are written — for a
// push, when the tensor's buffer may be reused — or rejects with the
// writer's failure.
//
// A frame nobody waits on (Post: step messages, grants) goes out at once,
// in one sendmsg(2) on the socket itself, when nothing is queued ahead of it
// and the owner handed the writer that plain socket: no promise, no
// allocation, no turn of the event loop. That was most of the cost of
// sending a step message. The owner says, not the stream: a TLS stream's
// getFd() is the socket under the TLS (KJ forwards it), and bytes written
// there would bypass the encryption.
//
//   FrameWriter writer(*stream, tls ? nullptr : stream->getFd(),
//                      [&](const Status& why) { ... the stream broke ... });
//   writer.Write(header, kj::mv(meta), payload, std::make_shared<Tensor>(t)).then(...);
//   writer.Post(header, kj::mv(meta));   // fire and forget
//   ... writer.Fail(errors::Unavailable("...")) rejects everything queued
//
// Thread-safety: event-loop thread only.
#pragma once

#include <capnp/common.h>
#include <kj/async-io.h>

#include <deque>
#include <functional>
#include <memory>

#include "common/status.h"
#include "daemon/transport/stream_frames.h"

namespace tfd {

class FrameWriter {
 public:
  // `socket`: the plain socket `out` writes to, for Post's direct writes;
  // null when `out` encrypts (TLS) or is no socket. `on_failed` hears once
  // that a write failed (not of Fail's own calls).
  FrameWriter(kj::AsyncOutputStream& out, kj::Maybe<int> socket,
              std::function<void(const Status&)> on_failed);
  ~FrameWriter();
  FrameWriter(const FrameWriter&) = delete;
  FrameWriter& operator=(const FrameWriter&) = delete;

  // Queues a frame. `payload` points into what `keep` holds alive (a
  // tensor, a serialized message) until the frame is written.
  kj::Promise<void> Write(const stream::FrameHeader& header, kj::Array<capnp::word> meta,
                          kj::ArrayPtr<const kj::byte> payload = {},
                          std::shared_ptr<const void> keep = nullptr);
  // Sends a frame without payload that nobody waits on; a failure reaches
  // on_failed (from the event loop, never from inside Post).
  void Post(const stream::FrameHeader& header, kj::Array<capnp::word> meta);
  // Rejects every queued frame with `why`; later writes fail at once.
  void Fail(const Status& why);
  // OK until a write failed or Fail was called.
  const Status& failure() const { return failure_; }

 private:
  struct Pending {
    bool raw = false;  // only `payload`: the rest of a frame Post began
    stream::FrameHeader header;
    kj::Array<capnp::word> meta;
    kj::ArrayPtr<const kj::byte> payload;
    std::shared_ptr<const void> keep;
    kj::Own<kj::PromiseFulfiller<void>> written;
  };
  // Writes what is queued, one frame after another, and waits for more.
  kj::Promise<void> Loop();
  void Enqueue(Pending pending);
  // Post's direct write: true when the frame went out whole or its rest was
  // queued; false when the socket failed (the caller queues the frame, and
  // the loop's write reports the failure).
  bool WriteNow(const stream::FrameHeader& header, kj::ArrayPtr<const kj::byte> meta);

  kj::AsyncOutputStream& out_;
  const kj::Maybe<int> fd_;  // the plain socket under out_, if the owner gave it
  std::function<void(const Status&)> on_failed_;
  std::deque<Pending> queue_;
  // The frame being written: its memory stays until the write has ended or
  // is cancelled, even when Fail already answered its promise.
  kj::Maybe<Pending> in_flight_;
  kj::Maybe<kj::Own<kj::PromiseFulfiller<void>>> wake_;  // the loop waits for a frame
  Status failure_;
  kj::Promise<void> loop_ = nullptr;  // last: cancelled first
};

}  // namespace tfd
