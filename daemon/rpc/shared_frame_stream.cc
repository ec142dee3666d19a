#include "daemon/rpc/shared_frame_stream.h"

#include <kj/common.h>

#include <cstring>

namespace tfd {

namespace {

// Cap'n Proto's own limit on segments per frame (serialize-async.c++); a
// frame past it, or one that ends early, is left to Cap'n Proto's reader to
// refuse with its own error.
constexpr uint32_t kMaxSegments = 512;

uint32_t LittleEndian32(const kj::byte* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

// Bytes of the segment table of a frame of `segments` segments: a count,
// then a size per segment, padded to a whole word.
size_t TableBytes(uint32_t segments) { return (segments / 2 + 1) * sizeof(capnp::word); }

}  // namespace

SharedFrameStream::SharedFrameStream(kj::Own<ReadAheadStream> stream)
    : SharedFrameStream(*stream, kj::mv(stream)) {}

SharedFrameStream::SharedFrameStream(ReadAheadStream& stream, kj::Own<ReadAheadStream>&& owned)
    : ForwardingMessageStream(OverBytes(kj::mv(owned))), stream_(stream) {}

std::shared_ptr<void> SharedFrameStream::FrameHolding(const void* p) const {
  const auto* word = static_cast<const capnp::word*>(p);
  auto it = frames_->upper_bound(word);
  if (it == frames_->begin()) return nullptr;
  --it;
  std::shared_ptr<Frame> frame = it->second.lock();
  if (frame == nullptr || p >= static_cast<const void*>(frame->end())) return nullptr;
  return frame;
}

kj::Promise<kj::Maybe<capnp::MessageReaderAndFds>> SharedFrameStream::tryReadMessage(
    kj::ArrayPtr<kj::AutoCloseFd> fd_space, capnp::ReaderOptions options,
    kj::ArrayPtr<capnp::word> scratch_space) {
  return stream_.Peek(sizeof(capnp::word))
      .then([this, fd_space, options, scratch_space](kj::ArrayPtr<const kj::byte> first) {
        // At the end of the stream, Cap'n Proto says whether it was clean.
        if (first.size() < sizeof(capnp::word)) {
          return inner().tryReadMessage(fd_space, options, scratch_space);
        }
        const uint64_t segments = uint64_t{LittleEndian32(first.begin())} + 1;
        if (segments >= kMaxSegments) {
          return inner().tryReadMessage(fd_space, options, scratch_space);
        }
        const size_t table_bytes = TableBytes(static_cast<uint32_t>(segments));
        return stream_.Peek(table_bytes).then(
            [this, fd_space, options, scratch_space, segments,
             table_bytes](kj::ArrayPtr<const kj::byte> table) {
              if (table.size() < table_bytes) {
                return inner().tryReadMessage(fd_space, options, scratch_space);
              }
              uint64_t words = 0;
              for (uint64_t i = 0; i < segments; ++i) {
                words += LittleEndian32(table.begin() + 4 * (i + 1));
              }
              if (words == 0 || words > options.traversalLimitInWords) {
                return inner().tryReadMessage(fd_space, options, scratch_space);
              }
              return ReadInto(words, fd_space, options);
            });
      });
}

kj::Promise<kj::Maybe<capnp::MessageReaderAndFds>> SharedFrameStream::ReadInto(
    uint64_t words, kj::ArrayPtr<kj::AutoCloseFd> fd_space, capnp::ReaderOptions options) {
  auto frame = std::make_shared<Frame>(kj::heapArray<capnp::word>(words));
  // Cap'n Proto reads a frame into the scratch space it is given when the
  // frame fits, which this one does exactly.
  return inner().tryReadMessage(fd_space, options, *frame)
      .then([frames = frames_, frame](kj::Maybe<capnp::MessageReaderAndFds> read) mutable {
        KJ_IF_MAYBE(message, read) {
          const capnp::word* first = frame->begin();
          (*frames)[first] = frame;
          message->reader = message->reader.attach(
              kj::mv(frame), kj::defer([frames = kj::mv(frames), first] { frames->erase(first); }));
        }
        return read;
      });
}

}  // namespace tfd
