#include "daemon/transport/frame_writer.h"

#include <kj/debug.h>

#include "daemon/rpc/kj_status.h"

namespace tfd {

FrameWriter::FrameWriter(kj::AsyncOutputStream& out,
                         std::function<void(const Status&)> on_failed)
    : out_(out), on_failed_(std::move(on_failed)) {
  loop_ = Loop().eagerlyEvaluate(nullptr);
}

FrameWriter::~FrameWriter() {
  loop_ = nullptr;  // cancels the write in flight before its memory goes
  Fail(errors::Unavailable("the stream closed"));
}

kj::Promise<void> FrameWriter::Write(const stream::FrameHeader& header,
                                     kj::Array<capnp::word> meta,
                                     kj::ArrayPtr<const kj::byte> payload,
                                     std::shared_ptr<const void> keep) {
  if (!failure_.ok()) return KjFromStatus(failure_);
  auto paf = kj::newPromiseAndFulfiller<void>();
  queue_.push_back(Pending{header, kj::mv(meta), payload, std::move(keep), kj::mv(paf.fulfiller)});
  KJ_IF_MAYBE(w, wake_) {
    (*w)->fulfill();
    wake_ = nullptr;
  }
  return kj::mv(paf.promise);
}

kj::Promise<void> FrameWriter::Loop() {
  if (!failure_.ok()) return kj::READY_NOW;
  if (queue_.empty()) {
    auto paf = kj::newPromiseAndFulfiller<void>();
    wake_ = kj::mv(paf.fulfiller);
    return paf.promise.then([this]() { return Loop(); });
  }
  in_flight_ = kj::mv(queue_.front());
  queue_.pop_front();
  Pending& p = KJ_ASSERT_NONNULL(in_flight_);
  return stream::WriteFrame(out_, p.header, p.meta, p.payload)
      .then(
          [this]() {
            KJ_IF_MAYBE(p, in_flight_) {
              if (p->written->isWaiting()) p->written->fulfill();
            }
            in_flight_ = nullptr;
            return Loop();
          },
          [this](kj::Exception&& e) {
            const Status why = errors::Unavailable("writing to the stream failed: ",
                                                   StatusFromKj(e).message());
            Fail(why);
            in_flight_ = nullptr;
            if (on_failed_) on_failed_(why);
          });
}

void FrameWriter::Fail(const Status& why) {
  if (failure_.ok()) failure_ = why;
  KJ_IF_MAYBE(p, in_flight_) {
    if (p->written->isWaiting()) p->written->reject(KjFromStatus(failure_));
  }
  for (auto& p : queue_) p.written->reject(KjFromStatus(failure_));
  queue_.clear();
  // A loop waiting for frames ends.
  KJ_IF_MAYBE(w, wake_) {
    (*w)->fulfill();
    wake_ = nullptr;
  }
}

}  // namespace tfd
