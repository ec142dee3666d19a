#include "daemon/transport/frame_writer.h"

#include <sys/socket.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstring>

#include <kj/debug.h>

#include "daemon/rpc/kj_status.h"

namespace tfd {

FrameWriter::FrameWriter(kj::AsyncOutputStream& out, kj::Maybe<int> socket,
                         std::function<void(const Status&)> on_failed)
    : out_(out), fd_(socket), on_failed_(std::move(on_failed)) {
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
  Enqueue(Pending{false, header, kj::mv(meta), payload, std::move(keep), kj::mv(paf.fulfiller)});
  return kj::mv(paf.promise);
}

void FrameWriter::Enqueue(Pending pending) {
  queue_.push_back(kj::mv(pending));
  KJ_IF_MAYBE(w, wake_) {
    (*w)->fulfill();
    wake_ = nullptr;
  }
}

void FrameWriter::Post(const stream::FrameHeader& header, kj::Array<capnp::word> meta) {
  if (!failure_.ok()) return;
  if (fd_ != nullptr && in_flight_ == nullptr && queue_.empty() &&
      WriteNow(header, meta.asBytes())) {
    return;
  }
  (void)Write(header, kj::mv(meta));
}

bool FrameWriter::WriteNow(const stream::FrameHeader& header, kj::ArrayPtr<const kj::byte> meta) {
  const int fd = KJ_ASSERT_NONNULL(fd_);
  const auto head = stream::EncodeFrameHeader(header);
  iovec pieces[2] = {{const_cast<kj::byte*>(head.data()), head.size()},
                     {const_cast<kj::byte*>(meta.begin()), meta.size()}};
  const size_t total = head.size() + meta.size();
  msghdr message{};
  message.msg_iov = pieces;
  message.msg_iovlen = meta.size() > 0 ? 2 : 1;
  ssize_t n;
  do {  // never SIGPIPE; a descriptor that is no socket falls back to the loop
    n = ::sendmsg(fd, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
  } while (n < 0 && errno == EINTR);
  if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return false;
  const size_t written = n < 0 ? 0 : static_cast<size_t>(n);
  if (written == total) return true;
  // The socket is full: the rest goes in order when it can, as any write.
  auto rest = std::make_shared<kj::Array<kj::byte>>(kj::heapArray<kj::byte>(total - written));
  size_t at = 0;
  for (const iovec& piece : pieces) {
    const auto* bytes = static_cast<const kj::byte*>(piece.iov_base);
    for (size_t i = 0; i < piece.iov_len; ++i, ++at) {
      if (at >= written) (*rest)[at - written] = bytes[i];
    }
  }
  auto paf = kj::newPromiseAndFulfiller<void>();
  Enqueue(Pending{true, {}, nullptr, rest->asPtr(), rest, kj::mv(paf.fulfiller)});
  return true;
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
  auto written = p.raw ? out_.write(p.payload.begin(), p.payload.size())
                      : stream::WriteFrame(out_, p.header, p.meta, p.payload);
  return written.then(
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
