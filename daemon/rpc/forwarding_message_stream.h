// ForwardingMessageStream: a capnp::MessageStream that passes every call to
// the message stream it owns, for adapters that change or watch one thing
// about a connection's messages (where a frame is read into, why the
// connection broke) and leave the rest to the stream beneath. Its
// counterpart for byte streams is ForwardingStream (forwarding_stream.h).
//
//   class Counting final : public ForwardingMessageStream {
//    public:
//     explicit Counting(kj::Own<kj::AsyncIoStream> bytes)
//         : ForwardingMessageStream(OverBytes(kj::mv(bytes))) {}
//     kj::Promise<void> writeMessage(kj::ArrayPtr<const int> fds, Segments segments) override {
//       ++sent_;
//       return inner().writeMessage(fds, segments);
//     }
//   };
//
// Thread-safety: that of the stream beneath.
#pragma once

#include <capnp/serialize-async.h>
#include <kj/async-io.h>

namespace tfd {

class ForwardingMessageStream : public capnp::MessageStream {
 public:
  using Segments = kj::ArrayPtr<const kj::ArrayPtr<const capnp::word>>;

  explicit ForwardingMessageStream(kj::Own<capnp::MessageStream> inner)
      : inner_(kj::mv(inner)) {}

  // Cap'n Proto's own message stream over `bytes`, which it keeps (and
  // destroys after itself).
  static kj::Own<capnp::MessageStream> OverBytes(kj::Own<kj::AsyncIoStream> bytes) {
    auto messages = kj::heap<capnp::AsyncIoMessageStream>(*bytes);
    return messages.attach(kj::mv(bytes));
  }

  kj::Promise<kj::Maybe<capnp::MessageReaderAndFds>> tryReadMessage(
      kj::ArrayPtr<kj::AutoCloseFd> fd_space, capnp::ReaderOptions options,
      kj::ArrayPtr<capnp::word> scratch_space) override {
    return inner_->tryReadMessage(fd_space, options, scratch_space);
  }
  kj::Promise<void> writeMessage(kj::ArrayPtr<const int> fds, Segments segments) override {
    return inner_->writeMessage(fds, segments);
  }
  kj::Promise<void> writeMessages(kj::ArrayPtr<Segments> messages) override {
    return inner_->writeMessages(messages);
  }
  kj::Maybe<int> getSendBufferSize() override { return inner_->getSendBufferSize(); }
  kj::Promise<void> end() override { return inner_->end(); }

 protected:
  capnp::MessageStream& inner() { return *inner_; }

 private:
  kj::Own<capnp::MessageStream> inner_;
};

}  // namespace tfd
