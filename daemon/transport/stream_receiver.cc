#include "daemon/transport/stream_receiver.h"

#include "daemon/transport/step_messages.h"
#include "daemon/transport/stream_steps.h"

namespace tfd {

using stream::FrameHeader;
using stream::FrameKind;

namespace {

std::string What(const PushHeader& h, const std::string& task) {
  return "tensor '" + h.key + "' of step " + std::to_string(h.step_id) + " from " + task;
}

kj::Promise<Status> Ended(Status why) { return kj::Promise<Status>(std::move(why)); }

}  // namespace

StreamReceiver::StreamReceiver(ReceiveRoom& room, PlaneSink& sink, std::string task,
                               kj::Own<kj::AsyncIoStream> stream, kj::Maybe<int> socket,
                               uint64_t eager_bytes)
    : room_(room),
      sink_(sink),
      task_(std::move(task)),
      eager_bytes_(eager_bytes),
      stream_(kj::mv(stream)),
      ahead_(dynamic_cast<ReadAheadStream*>(stream_.get())),
      errors_(nullptr, "a stream receive"),
      reserving_(errors_),
      // A failed write is a broken stream, which the read loop sees too.
      writer_(*stream_, socket, nullptr) {}

StreamReceiver::~StreamReceiver() = default;

kj::Promise<Status> StreamReceiver::Run() {
  return Next().catch_([this](kj::Exception&& e) -> Status {
    return errors::Unavailable("the stream from ", task_, " broke: ", StatusFromKj(e).message());
  });
}

kj::Promise<Status> StreamReceiver::Next() {
  // Each continuation owns its error handler (KJ keeps an lvalue's reference).
  auto broke = [this]() {
    return [this](kj::Exception&& e) -> kj::Promise<Status> {
      const Status s = StatusFromKj(e);
      return Ended(Status(s.code(), "from " + task_ + ": " + s.message()));
    };
  };
  if (ahead_ != nullptr) {
    while (TakeBufferedStep()) {
    }
    if (ahead_->buffered().size() == 0) {
      // One promise until the next bytes come; the frames in them are then
      // taken in place where they are whole.
      return ahead_->Peek(1).then(
          [this](kj::ArrayPtr<const kj::byte> first) -> kj::Promise<Status> {
            if (first.size() == 0) return Ended(OkStatus());  // closed between frames
            return Next();
          },
          broke());
    }
  }
  return stream::ReadFrame(*stream_, stream::Side::kOpener)
      .then(
          [this](kj::Maybe<stream::Frame> frame) -> kj::Promise<Status> {
            KJ_IF_MAYBE(f, frame) { return OnFrame(kj::mv(*f)); }
            return Ended(OkStatus());  // the opener closed it between frames
          },
          broke());
}

bool StreamReceiver::TakeBufferedStep() {
  std::optional<StatusOr<ReceivedStep>> step =
      tfd::TakeBufferedStep(*ahead_, stream::Side::kOpener);
  if (!step) return false;
  HandOnStep(sink_, task_, std::move(*step));
  return true;
}

Status StreamReceiver::SendStepMessage(const StepMessage& message) {
  TFD_RETURN_IF_ERROR(PostStepFrame(writer_, message).WithContext("to " + task_));
  sink_.StepMessageSent();
  return OkStatus();
}

kj::Promise<Status> StreamReceiver::OnFrame(stream::Frame frame) {
  const FrameHeader& h = frame.header;
  if (h.kind == FrameKind::kStep) {
    HandOnStep(sink_, task_, DecodeStepMessage(frame.meta));
    return Next();
  }
  if (h.kind == FrameKind::kData) return ReadData(h);
  if (h.kind != FrameKind::kPush && h.kind != FrameKind::kOffer) {
    return Ended(errors::InvalidArgument("a ", FrameKindName(h.kind), " frame from ", task_,
                                         " after its hello"));
  }
  auto push = DecodePushHeader(frame.meta);
  if (!push.ok()) return Ended(Status(push.status().code(), push.status().message() + " from " + task_));
  if (Status ok = CheckPayload(*push, h.bytes); !ok.ok()) {
    return Ended(Status(ok.code(), ok.message() + " from " + task_));
  }
  if (h.kind == FrameKind::kPush) return ReadPush(h, std::move(push).value());
  if (Status offered = Offer(h, std::move(push).value()); !offered.ok()) return Ended(offered);
  return Next();
}

kj::Promise<Status> StreamReceiver::ReadPush(const FrameHeader& h, PushHeader push) {
  if (h.bytes > eager_bytes_) {
    return Ended(errors::InvalidArgument("a push of ", h.bytes, " bytes from ", task_,
                                         "; this task takes at most ", eager_bytes_,
                                         " inline, larger ones are offered"));
  }
  if (!push.raw) {
    auto words = kj::heapArray<capnp::word>(h.bytes / sizeof(capnp::word));
    auto bytes = words.asBytes();
    return stream_->read(bytes.begin(), bytes.size())
        .then([this, push = std::move(push), words = kj::mv(words), n = h.bytes]() mutable {
          Deliver(push, DecodeTensorMessage(words, room_.options().max_held_bytes), n);
          return Next();
        });
  }
  auto tensor = AllocatePushed(push);
  if (!tensor.ok()) return Ended(tensor.status());
  void* into = tensor->raw_data();
  auto read = h.bytes == 0 ? kj::Promise<void>(kj::READY_NOW) : stream_->read(into, h.bytes);
  return read.then([this, push = std::move(push), t = std::move(tensor).value(), n = h.bytes]() mutable {
    Deliver(push, std::move(t), n);
    return Next();
  });
}

Status StreamReceiver::Offer(const FrameHeader& h, PushHeader push) {
  if (granted_.count(h.tag) != 0 || waiting_.count(h.tag) != 0) {
    return errors::InvalidArgument(task_, " offered tag ", h.tag, " twice");
  }
  if (granted_.size() + waiting_.size() >= kMaxOffers) {
    return errors::ResourceExhausted(task_, " has ", kMaxOffers,
                                     " offers waiting on one stream; that is the most");
  }
  waiting_.insert(h.tag);
  auto room = room_.Reserve(h.bytes, What(push, task_))
                  .then([](std::shared_ptr<Buffer> b) -> StatusOr<std::shared_ptr<Buffer>> { return b; },
                        [](kj::Exception&& e) -> StatusOr<std::shared_ptr<Buffer>> {
                          return StatusFromKj(e);
                        });
  reserving_.add(room.then([this, tag = h.tag, push = std::move(push)](
                               StatusOr<std::shared_ptr<Buffer>> buffer) mutable {
    Grant(tag, std::move(push), std::move(buffer));
  }));
  return OkStatus();
}

void StreamReceiver::Grant(uint64_t tag, PushHeader push, StatusOr<std::shared_ptr<Buffer>> room) {
  waiting_.erase(tag);
  const Status granted = room.status();
  if (granted.ok()) {
    granted_[tag] = Granted{std::move(push), std::move(room).value()};
  } else {
    sink_.Refused(granted.message(), false);
    Deliver(push, granted, 0);
  }
  auto meta = stream::EncodeGrant(granted);
  const FrameHeader header{.kind = FrameKind::kGrant,
                           .meta_bytes = static_cast<uint32_t>(meta.asBytes().size()),
                           .tag = tag};
  // A failed write is a broken stream, which the read loop sees too.
  writer_.Post(header, kj::mv(meta));
}

kj::Promise<Status> StreamReceiver::ReadData(const FrameHeader& h) {
  auto it = granted_.find(h.tag);
  if (it == granted_.end()) {
    return Ended(errors::InvalidArgument(task_, " sent data for offer ", h.tag,
                                         ", which this task has not granted"));
  }
  Granted granted = std::move(it->second);
  granted_.erase(it);
  if (h.bytes != granted.buffer->size()) {
    return Ended(errors::InvalidArgument(task_, " sent ", h.bytes, " bytes for offer ", h.tag,
                                         " of ", granted.buffer->size()));
  }
  void* into = granted.buffer->data();
  return stream_->read(into, h.bytes).then([this, g = std::move(granted), n = h.bytes]() mutable {
    if (g.header.raw) {
      Deliver(g.header, Tensor::FromBuffer(g.header.dtype, g.header.shape, g.buffer), n);
    } else {
      auto words = kj::arrayPtr(static_cast<const capnp::word*>(g.buffer->data()),
                                n / sizeof(capnp::word));
      Deliver(g.header, DecodeTensorMessage(words, room_.options().max_held_bytes), n);
    }
    return Next();
  });
}

void StreamReceiver::Deliver(const PushHeader& push, StatusOr<Tensor> tensor, uint64_t bytes) {
  sink_.Received(task_, push.step_id, push.key, std::move(tensor), bytes);
}

}  // namespace tfd
