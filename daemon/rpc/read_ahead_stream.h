// ReadAheadStream: a byte stream that reads small requests ahead into a
// buffer, so that one read(2) brings a whole RPC frame.
//
// Cap'n Proto 0.9.2 reads a frame in two or three requests (the first word,
// the segment table, the body), each a read(2) on an unbuffered socket: for
// the small calls of a training step that is most of a task's system calls
// (bench/rpc_bench, "where the time goes"). Here a request smaller than the
// buffer reads as much as the socket holds, up to the buffer's size, and
// later requests are served from what is left. A request at least as large
// as the buffer (a tensor's body) goes straight into the caller's memory
// once the buffered bytes are used up, so large frames are not copied twice.
//
//   auto stream = kj::heap<ReadAheadStream>(kj::mv(socket));
//   stream->Peek(8).then([](kj::ArrayPtr<const kj::byte> first) { ... });
//
// Thread-safety: the event-loop thread that owns the stream; one read at a
// time, as for any kj stream.
#pragma once

#include <kj/array.h>
#include <kj/async-io.h>

#include "daemon/rpc/forwarding_stream.h"

namespace tfd {

class ReadAheadStream final : public ForwardingStream {
 public:
  explicit ReadAheadStream(kj::Own<kj::AsyncIoStream> inner, size_t buffer_bytes = 8192);

  kj::Promise<size_t> tryRead(void* buffer, size_t min_bytes, size_t max_bytes) override;

  // The next `n` bytes (at most the buffer's size), left to be read: fewer
  // only when the stream ends first. For a server that tells protocols
  // apart by their first bytes.
  kj::Promise<kj::ArrayPtr<const kj::byte>> Peek(size_t n);

  // The bytes read ahead and not taken yet, in place, for a reader that can
  // use whole messages where they lie: valid until the next read or Skip.
  kj::ArrayPtr<const kj::byte> buffered() const { return buffer_.slice(begin_, end_); }
  // Takes the first `n` buffered bytes (at most buffered().size()) as read.
  void Skip(size_t n);

 private:
  // Moves up to `max` buffered bytes to `out`; returns how many.
  size_t TakeBuffered(kj::byte* out, size_t max);

  kj::Array<kj::byte> buffer_;
  size_t begin_ = 0;  // buffered bytes are buffer_[begin_, end_)
  size_t end_ = 0;
};

}  // namespace tfd
