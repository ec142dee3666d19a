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
// With a FrameLedger (daemon/rpc/frame_ledger.h), each message it reads
// carries the charge its frame took in the task's memory budget when the
// byte stream beneath read the frame's header: the charge is attached to the
// MessageReader and given back when Cap'n Proto frees the message — at once
// for most, when the call ends for a call's params, or when it releases them
// (run and runStep do, once their feeds are copied out and charged).
//
//   auto watched = kj::heap<WatchedMessageStream>(kj::mv(byte_stream), kj::addRef(*ledger));
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

#include "daemon/rpc/forwarding_message_stream.h"
#include "daemon/rpc/frame_ledger.h"

namespace tfd {

class WatchedMessageStream final : public ForwardingMessageStream {
 public:
  // `ledger` null: messages carry no charge.
  explicit WatchedMessageStream(kj::Own<kj::AsyncIoStream> stream,
                                kj::Own<FrameLedger> ledger = {});

  // The first reason the connection broke, if it did.
  kj::Maybe<const std::string&> failure() const;

  // What it watches: failed reads and ledger charges, outgoing Aborts.
  kj::Promise<kj::Maybe<capnp::MessageReaderAndFds>> tryReadMessage(
      kj::ArrayPtr<kj::AutoCloseFd> fd_space, capnp::ReaderOptions options,
      kj::ArrayPtr<capnp::word> scratch_space) override;
  kj::Promise<void> writeMessage(kj::ArrayPtr<const int> fds, Segments segments) override;
  kj::Promise<void> writeMessages(kj::ArrayPtr<Segments> messages) override;

 private:
  void Note(kj::StringPtr why);
  // Notes the reason of an Abort among outgoing messages.
  void InspectOutgoing(Segments segments);

  kj::Own<FrameLedger> ledger_;
  kj::Maybe<std::string> failure_;
};

}  // namespace tfd
