// SharedFrameStream: the message stream of a client's connection, which
// reads each frame into memory of its own that can be shared, so that bytes
// a reply carries (a fetched tensor's) can outlive the reply, the connection
// and the event loop: what keeps them alive is the frame's memory alone,
// which any thread may free. Cap'n Proto's own reader allocates the frame
// inside the MessageReader, which the RPC system owns and frees on the loop
// thread; here the frame is read into a shared buffer sized from the frame's
// segment table (peeked at, not consumed), and Cap'n Proto's reader reads
// into it, checking the frame as it always does.
//
//   auto frames = kj::heap<SharedFrameStream>(kj::heap<ReadAheadStream>(kj::mv(socket)));
//   ... a reply came; `bytes` points into it:
//   std::shared_ptr<void> keep = frames->FrameHolding(bytes.begin());  // null: not in a frame
//
// Thread-safety: the event-loop thread that owns the stream. The memory
// FrameHolding returns may be released on any thread.
#pragma once

#include <capnp/serialize-async.h>
#include <kj/async-io.h>

#include <map>
#include <memory>

#include "daemon/rpc/forwarding_message_stream.h"
#include "daemon/rpc/read_ahead_stream.h"

namespace tfd {

class SharedFrameStream final : public ForwardingMessageStream {
 public:
  explicit SharedFrameStream(kj::Own<ReadAheadStream> stream);

  // The memory of the received frame that holds `p`, while a message read
  // from it is alive; null when none does.
  std::shared_ptr<void> FrameHolding(const void* p) const;

  // Reads each frame into a shared buffer of its own; writes as it is.
  kj::Promise<kj::Maybe<capnp::MessageReaderAndFds>> tryReadMessage(
      kj::ArrayPtr<kj::AutoCloseFd> fd_space, capnp::ReaderOptions options,
      kj::ArrayPtr<capnp::word> scratch_space) override;

 private:
  using Frame = kj::Array<capnp::word>;
  // The frames of live messages by first word; shared with each message's
  // reader, which removes its frame when Cap'n Proto frees it.
  using Frames = std::map<const capnp::word*, std::weak_ptr<Frame>>;

  // Reads a frame of `words` words (the segment table said so) into a
  // shared buffer.
  kj::Promise<kj::Maybe<capnp::MessageReaderAndFds>> ReadInto(
      uint64_t words, kj::ArrayPtr<kj::AutoCloseFd> fd_space, capnp::ReaderOptions options);

  // `stream` is `*owned`, which the base class keeps under Cap'n Proto's
  // reader; here it is peeked at. `owned` is taken by reference so that
  // nothing moves it before `*owned` is read, in whatever order the
  // caller's arguments are evaluated.
  SharedFrameStream(ReadAheadStream& stream, kj::Own<ReadAheadStream>&& owned);

  ReadAheadStream& stream_;
  std::shared_ptr<Frames> frames_ = std::make_shared<Frames>();
};

}  // namespace tfd
