// One Cap'n Proto RPC connection over a byte stream, with the reader limits
// tensors need: the default 64 MiB traversal limit would refuse a 256 MB
// tensor, so connections allow kMaxMessageWords (a 512 MiB Data field is
// Cap'n Proto's own ceiling per tensor). A server holds peers that have not
// logged in to far less, in the stream beneath (daemon/rpc/pre_login_stream.h).
//
//   auto conn = RpcConnection::Client(kj::mv(stream));
//   auto gate = conn->Bootstrap().castAs<proto::Gate>();
//
// Thread-safety: owned by the event-loop thread that made it.
#pragma once

#include <capnp/rpc-twoparty.h>
#include <capnp/serialize-async.h>
#include <kj/async-io.h>

#include <memory>

#include "common/size_limits.h"

namespace tfd {

class SharedFrameStream;

inline constexpr uint64_t kMaxMessageWords = uint64_t{1} << 31;  // 16 GiB

capnp::ReaderOptions WireReaderOptions();

// The largest frame a server lets a logged-in peer send when
// --max-message-bytes does not say: room for the largest tensor a feed may
// be and all the constants of a graph, and 64 MiB for the rest of a request;
// never more than Cap'n Proto reads (kMaxMessageWords). With the defaults,
// 4.3 GiB.
uint64_t DefaultMaxMessageBytes(const SizeLimits& limits);

class RpcConnection {
 public:
  // The client side: `Bootstrap()` is the server's Gate. The socket is read
  // through a ReadAheadStream (a server's caller puts one beneath its
  // message stream), each frame into memory of its own (FrameHolding).
  static kj::Own<RpcConnection> Client(kj::Own<kj::AsyncIoStream> stream);
  // The server side: serves `bootstrap` to the peer over `messages` (which
  // owns the stream beneath it).
  static kj::Own<RpcConnection> Server(kj::Own<capnp::MessageStream> messages,
                                       capnp::Capability::Client bootstrap);

  capnp::Capability::Client Bootstrap();
  kj::Promise<void> OnDisconnect() { return network_->onDisconnect(); }
  // On the client side, the memory of the received frame that holds `p`
  // (bytes of a reply still alive), which may outlive the reply and this
  // connection and be freed on any thread (daemon/rpc/shared_frame_stream.h);
  // null on the server side or when no frame holds `p`.
  std::shared_ptr<void> FrameHolding(const void* p) const;

  RpcConnection(kj::Own<capnp::MessageStream> messages, capnp::rpc::twoparty::Side side);

 private:
  // Declared in the order they depend on each other, so they go in reverse.
  kj::Own<capnp::MessageStream> messages_;
  kj::Own<capnp::TwoPartyVatNetwork> network_;
  kj::Own<capnp::RpcSystem<capnp::rpc::twoparty::VatId>> rpc_;
  SharedFrameStream* frames_ = nullptr;  // messages_, on the client side
};

}  // namespace tfd
