// WatchedMessageStream: the message stream of one accepted RPC connection,
// which remembers why the connection broke, so the server can say so in its
// log with the peer's address.
//
// Cap'n Proto's RPC system answers a broken connection — a frame it cannot
// read, a bad pointer, a call to nothing — with an Abort message to the peer
// and then drops it, telling the server nothing but that it has gone. The
// reason is seen here on its way: a read that fails, or an Abort the RPC
// system sends. Aborts of type DISCONNECTED are the ordinary end of a
// connection (the peer went away or closed its RpcSystem) and are not
// remembered; neither is a clean end of stream between messages.
//
//   auto watched = kj::heap<WatchedMessageStream>(kj::mv(byte_stream));
//   WatchedMessageStream& watch = *watched;
//   auto rpc = RpcConnection::Server(kj::mv(watched), gate);
//   ... once rpc->OnDisconnect() resolved:
//   KJ_IF_MAYBE(why, watch.failure()) { log *why }
//
// Thread-safety: the event-loop thread that owns the stream.
#pragma once

#include <capnp/serialize-async.h>
#include <kj/async-io.h>

#include <string>

namespace tfd {

class WatchedMessageStream final : public capnp::MessageStream {
 public:
  explicit WatchedMessageStream(kj::Own<kj::AsyncIoStream> stream);

  // The first reason the connection broke, if it did.
  kj::Maybe<const std::string&> failure() const;

  // capnp::MessageStream
  kj::Promise<kj::Maybe<capnp::MessageReaderAndFds>> tryReadMessage(
      kj::ArrayPtr<kj::AutoCloseFd> fd_space, capnp::ReaderOptions options,
      kj::ArrayPtr<capnp::word> scratch_space) override;
  kj::Promise<void> writeMessage(
      kj::ArrayPtr<const int> fds,
      kj::ArrayPtr<const kj::ArrayPtr<const capnp::word>> segments) override;
  kj::Promise<void> writeMessages(
      kj::ArrayPtr<kj::ArrayPtr<const kj::ArrayPtr<const capnp::word>>> messages) override;
  kj::Maybe<int> getSendBufferSize() override;
  kj::Promise<void> end() override;

 private:
  void Note(kj::StringPtr why);
  // Notes the reason of an Abort among outgoing messages.
  void InspectOutgoing(kj::ArrayPtr<const kj::ArrayPtr<const capnp::word>> segments);

  kj::Own<kj::AsyncIoStream> stream_;
  capnp::AsyncIoMessageStream messages_;
  kj::Maybe<std::string> failure_;
};

}  // namespace tfd
