#include "daemon/rpc/watched_message_stream.h"

#include <capnp/rpc.capnp.h>
#include <capnp/serialize.h>

namespace tfd {

WatchedMessageStream::WatchedMessageStream(kj::Own<kj::AsyncIoStream> stream,
                                           kj::Own<FrameLedger> ledger)
    : ForwardingMessageStream(OverBytes(kj::mv(stream))), ledger_(kj::mv(ledger)) {}

kj::Maybe<const std::string&> WatchedMessageStream::failure() const {
  KJ_IF_MAYBE(why, failure_) { return *why; }
  return nullptr;
}

void WatchedMessageStream::Note(kj::StringPtr why) {
  if (failure_ == nullptr) failure_ = std::string(why.cStr());
}

kj::Promise<kj::Maybe<capnp::MessageReaderAndFds>> WatchedMessageStream::tryReadMessage(
    kj::ArrayPtr<kj::AutoCloseFd> fd_space, capnp::ReaderOptions options,
    kj::ArrayPtr<capnp::word> scratch_space) {
  return inner().tryReadMessage(fd_space, options, scratch_space)
      .then(
          [this](kj::Maybe<capnp::MessageReaderAndFds>&& message) {
            if (ledger_.get() != nullptr) {
              KJ_IF_MAYBE(m, message) { m->reader = m->reader.attach(ledger_->TakeNext()); }
            }
            return kj::mv(message);
          },
          [this](kj::Exception&& e) -> kj::Maybe<capnp::MessageReaderAndFds> {
            Note(e.getDescription());
            kj::throwFatalException(kj::mv(e));
          });
}

void WatchedMessageStream::InspectOutgoing(Segments segments) {
  if (segments.size() == 0) return;
  // Our own RPC system built the message; reading its root and union tag
  // touches a few words however large the message is.
  capnp::SegmentArrayMessageReader reader(segments);
  auto message = reader.getRoot<capnp::rpc::Message>();
  if (!message.isAbort()) return;
  auto abort = message.getAbort();
  if (abort.getType() == capnp::rpc::Exception::Type::DISCONNECTED) return;
  Note(abort.getReason());
}

kj::Promise<void> WatchedMessageStream::writeMessage(kj::ArrayPtr<const int> fds,
                                                     Segments segments) {
  InspectOutgoing(segments);
  return inner().writeMessage(fds, segments);
}

kj::Promise<void> WatchedMessageStream::writeMessages(kj::ArrayPtr<Segments> messages) {
  for (auto segments : messages) InspectOutgoing(segments);
  return inner().writeMessages(messages);
}

}  // namespace tfd
