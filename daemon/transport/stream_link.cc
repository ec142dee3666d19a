#include "daemon/transport/stream_link.h"

#include <kj/debug.h>

#include "daemon/transport/push_header.h"
#include "daemon/transport/stream_steps.h"

namespace tfd {

using stream::FrameHeader;
using stream::FrameKind;

StreamLink::StreamLink(PlaneSink& sink, std::string task, kj::Own<kj::AsyncIoStream> stream,
                       const stream::Welcome& welcome, bool tls)
    : sink_(sink),
      task_(std::move(task)),
      eager_bytes_(welcome.eager_bytes),
      tls_(tls),
      stream_(kj::heap<ReadAheadStream>(kj::mv(stream))),
      errors_(nullptr, "a stream push"),
      sending_(errors_),
      writer_(*stream_, tls ? nullptr : stream_->getFd(),
              [this](const Status& why) { Fail(why); }) {
  reading_ = ReadBack().eagerlyEvaluate(nullptr);
}

StreamLink::~StreamLink() {
  reading_ = nullptr;
  Close(errors::Unavailable("the data plane to ", task_, " closed"));
}

StreamLink::Payload StreamLink::PayloadOf(const Tensor& tensor) {
  if (tensor.dtype() == DType::kString) {
    auto message = std::make_shared<kj::Array<capnp::word>>(EncodeTensorMessage(tensor));
    return {message->asBytes(), message};
  }
  auto kept = std::make_shared<Tensor>(tensor);
  return {kj::arrayPtr(static_cast<const kj::byte*>(kept->raw_data()), kept->total_bytes()),
          kept};
}

kj::Promise<void> StreamLink::Push(int64_t step_id, const std::string& key,
                                   const Tensor& tensor) {
  if (!failure_.ok()) return KjFromStatus(failure_);
  Payload payload = PayloadOf(tensor);
  auto meta = EncodePushHeader("", step_id, key, tensor);
  const uint64_t bytes = payload.bytes.size();
  FrameHeader header{.meta_bytes = static_cast<uint32_t>(meta.asBytes().size()), .bytes = bytes};
  if (bytes <= eager_bytes_) {
    header.kind = FrameKind::kPush;
    return writer_.Write(header, kj::mv(meta), payload.bytes, std::move(payload.keep))
        .then([this, bytes]() { sink_.Sent(task_, bytes); });
  }
  header.kind = FrameKind::kOffer;
  header.tag = next_tag_++;
  auto paf = kj::newPromiseAndFulfiller<void>();
  offers_[header.tag] = Offer{bytes, payload.bytes, std::move(payload.keep), kj::mv(paf.fulfiller)};
  // A failed write fails the link, and with it this offer.
  (void)writer_.Write(header, kj::mv(meta));
  return kj::mv(paf.promise);
}

Status StreamLink::SendStepMessage(const StepMessage& message) {
  if (!failure_.ok()) return failure_;
  TFD_RETURN_IF_ERROR(PostStepFrame(writer_, message).WithContext("to " + task_));
  sink_.StepMessageSent();
  return OkStatus();
}

kj::Promise<void> StreamLink::ReadBack() {
  // Each continuation owns its error handler (KJ keeps an lvalue's reference).
  auto broke = [this]() {
    return [this](kj::Exception&& e) {
      Fail(errors::Unavailable("the stream to ", task_, " broke: ", StatusFromKj(e).message()));
    };
  };
  while (failure_.ok()) {
    std::optional<StatusOr<ReceivedStep>> step = TakeBufferedStep(*stream_, stream::Side::kTask);
    if (!step) break;
    HandOnStep(sink_, task_, std::move(*step));
  }
  if (!failure_.ok()) return kj::READY_NOW;
  if (stream_->buffered().size() == 0) {
    // One promise until the next bytes come; the step frames in them are
    // then taken where they lie.
    return stream_->Peek(1).then(
        [this](kj::ArrayPtr<const kj::byte> first) -> kj::Promise<void> {
          if (first.size() != 0) return ReadBack();
          Fail(errors::Unavailable(task_, " closed the stream"));
          return kj::READY_NOW;
        },
        broke());
  }
  return stream::ReadFrame(*stream_, stream::Side::kTask)
      .then(
          [this](kj::Maybe<stream::Frame> read) -> kj::Promise<void> {
            KJ_IF_MAYBE(frame, read) { return OnFrame(kj::mv(*frame)); }
            Fail(errors::Unavailable(task_, " closed the stream"));
            return kj::READY_NOW;
          },
          broke());
}

kj::Promise<void> StreamLink::OnFrame(stream::Frame frame) {
  if (frame.header.kind == FrameKind::kStep) {
    HandOnStep(sink_, task_, DecodeStepMessage(frame.meta));
    return ReadBack();
  }
  if (frame.header.kind != FrameKind::kGrant) {
    Fail(errors::Unavailable(task_, " sent a ", FrameKindName(frame.header.kind),
                             " frame on the stream; only grants and step messages come back"));
    return kj::READY_NOW;
  }
  auto granted = stream::DecodeGrant(frame.meta);
  if (!granted.ok()) {
    Fail(errors::Unavailable(task_, " sent ", granted.status().message()));
    return kj::READY_NOW;
  }
  OnGrant(frame.header.tag, granted->status);
  return ReadBack();
}

void StreamLink::OnGrant(uint64_t tag, const Status& granted) {
  auto it = offers_.find(tag);
  if (it == offers_.end()) {
    Fail(errors::Unavailable(task_, " granted offer ", tag, ", which this task never made"));
    return;
  }
  Offer offer = kj::mv(it->second);
  offers_.erase(it);
  if (!granted.ok()) {
    offer.done->reject(KjFromStatus(granted));
    return;
  }
  const FrameHeader header{.kind = FrameKind::kData, .bytes = offer.bytes, .tag = tag};
  auto written = writer_.Write(header, nullptr, offer.payload, std::move(offer.keep));
  writing_[tag] = kj::mv(offer.done);
  sending_.add(Settle(kj::mv(written)).then([this, tag, bytes = offer.bytes](Status s) {
    auto it = writing_.find(tag);
    if (it == writing_.end()) return;  // failed with the link already
    auto done = kj::mv(it->second);
    writing_.erase(it);
    if (!s.ok()) {
      done->reject(KjFromStatus(s));
      return;
    }
    sink_.Sent(task_, bytes);
    done->fulfill();
  }));
}

void StreamLink::Fail(const Status& why) {
  if (!failure_.ok()) return;
  Close(why);
  sink_.LinkFailed(task_, why);
}

void StreamLink::Close(const Status& why) {
  if (!failure_.ok()) return;
  failure_ = why;
  writer_.Fail(why);
  for (auto& [tag, offer] : offers_) offer.done->reject(KjFromStatus(why));
  offers_.clear();
  for (auto& [tag, done] : writing_) done->reject(KjFromStatus(why));
  writing_.clear();
  KJ_IF_MAYBE(e, kj::runCatchingExceptions([&]() { stream_->shutdownWrite(); })) {
    // Already broken: nothing to tell the peer.
  }
}

}  // namespace tfd
