#include "daemon/rpc/connection.h"

#include <algorithm>

#include "daemon/rpc/read_ahead_stream.h"
#include "daemon/rpc/shared_frame_stream.h"

namespace tfd {

capnp::ReaderOptions WireReaderOptions() {
  capnp::ReaderOptions options;
  options.traversalLimitInWords = kMaxMessageWords;
  options.nestingLimit = 64;
  return options;
}

uint64_t DefaultMaxMessageBytes(const SizeLimits& limits) {
  constexpr uint64_t kMostBytes = kMaxMessageWords * sizeof(capnp::word);
  constexpr uint64_t kRestOfRequest = uint64_t{64} << 20;
  uint64_t bytes = 0;
  if (__builtin_add_overflow(limits.max_tensor_bytes, limits.max_graph_bytes, &bytes) ||
      __builtin_add_overflow(bytes, kRestOfRequest, &bytes)) {
    return kMostBytes;
  }
  return std::min(bytes, kMostBytes);
}

RpcConnection::RpcConnection(kj::Own<capnp::MessageStream> messages,
                             capnp::rpc::twoparty::Side side)
    : messages_(kj::mv(messages)),
      network_(kj::heap<capnp::TwoPartyVatNetwork>(*messages_, side, WireReaderOptions())) {}

kj::Own<RpcConnection> RpcConnection::Client(kj::Own<kj::AsyncIoStream> socket) {
  auto messages = kj::heap<SharedFrameStream>(kj::heap<ReadAheadStream>(kj::mv(socket)));
  SharedFrameStream& frames = *messages;
  auto conn = kj::heap<RpcConnection>(kj::mv(messages), capnp::rpc::twoparty::Side::CLIENT);
  conn->frames_ = &frames;
  conn->rpc_ = kj::heap(capnp::makeRpcClient(*conn->network_));
  return conn;
}

kj::Own<RpcConnection> RpcConnection::Server(kj::Own<capnp::MessageStream> messages,
                                             capnp::Capability::Client bootstrap) {
  auto conn = kj::heap<RpcConnection>(kj::mv(messages), capnp::rpc::twoparty::Side::SERVER);
  conn->rpc_ = kj::heap(capnp::makeRpcServer(*conn->network_, kj::mv(bootstrap)));
  return conn;
}

std::shared_ptr<void> RpcConnection::FrameHolding(const void* p) const {
  return frames_ == nullptr ? nullptr : frames_->FrameHolding(p);
}

capnp::Capability::Client RpcConnection::Bootstrap() {
  capnp::MallocMessageBuilder vat_id;
  auto id = vat_id.initRoot<capnp::rpc::twoparty::VatId>();
  id.setSide(capnp::rpc::twoparty::Side::SERVER);
  return rpc_->bootstrap(id);
}

}  // namespace tfd
