#include "daemon/transport/receive_room.h"

#include "daemon/rpc/kj_status.h"

namespace tfd {
namespace {

// How often waiting receives look for room again.
constexpr kj::Duration kRetryEvery = 5 * kj::MILLISECONDS;

}  // namespace

// One receive waiting for room; removes itself from the list when its
// promise is dropped.
class ReceiveRoom::Waiter {
 public:
  Waiter(kj::PromiseFulfiller<std::shared_ptr<Buffer>>& fulfiller, ReceiveRoom& room,
         size_t bytes, std::string what)
      : fulfiller_(fulfiller), room_(room), bytes_(bytes), what_(std::move(what)),
        arrived_(room.timer_.now()) {
    position_ = room_.waiters_.insert(room_.waiters_.end(), this);
  }
  ~Waiter() { Leave(); }

  size_t bytes() const { return bytes_; }
  kj::TimePoint arrived() const { return arrived_; }
  const std::string& what() const { return what_; }

  void Fulfil(StatusOr<std::shared_ptr<Buffer>> buffer) {
    Leave();
    if (buffer.ok()) {
      fulfiller_.fulfill(std::move(buffer).value());
    } else {
      fulfiller_.reject(KjFromStatus(buffer.status()));
    }
  }

 private:
  void Leave() {
    if (!listed_) return;
    room_.waiters_.erase(position_);
    listed_ = false;
  }

  kj::PromiseFulfiller<std::shared_ptr<Buffer>>& fulfiller_;
  ReceiveRoom& room_;
  const size_t bytes_;
  const std::string what_;
  const kj::TimePoint arrived_;
  std::list<Waiter*>::iterator position_;
  bool listed_ = true;
};

ReceiveRoom::ReceiveRoom(kj::Timer& timer, Options options)
    : timer_(timer),
      options_(options),
      pool_(BufferPool::Options{.max_cached_bytes = options.max_cached_bytes}) {}

ReceiveRoom::~ReceiveRoom() {
  const Status gone = errors::Unavailable("the data plane is shutting down");
  while (!waiters_.empty()) waiters_.front()->Fulfil(gone);
}

bool ReceiveRoom::Fits(size_t bytes) const {
  return pool_.stats().bytes_in_use + BufferPool::BlockSize(bytes) <= options_.max_held_bytes;
}

Status ReceiveRoom::TooLarge(size_t bytes, const std::string& what) const {
  return errors::ResourceExhausted(what, " is ", bytes, " bytes, more than the ",
                                   options_.max_held_bytes,
                                   " this task may hold of received tensors (--max-received-bytes)");
}

StatusOr<std::shared_ptr<Buffer>> ReceiveRoom::TakeNow(size_t bytes, const std::string& what) {
  if (bytes > options_.max_held_bytes) return TooLarge(bytes, what);
  if (!waiters_.empty() || !Fits(bytes)) {
    return errors::ResourceExhausted(what, " (", bytes, " bytes) finds no room: this task holds ",
                                     pool_.stats().bytes_in_use, " bytes of received tensors, at most ",
                                     options_.max_held_bytes, " (--max-received-bytes)");
  }
  return pool_.Get(bytes);
}

kj::Promise<std::shared_ptr<Buffer>> ReceiveRoom::Reserve(size_t bytes, std::string what) {
  if (bytes > options_.max_held_bytes) return KjFromStatus(TooLarge(bytes, what));
  // Behind earlier waiters, so a stream of small tensors cannot starve a large one.
  if (waiters_.empty() && Fits(bytes)) {
    auto buffer = pool_.Get(bytes);
    if (!buffer.ok()) return KjFromStatus(buffer.status());
    return std::move(buffer).value();
  }
  ++held_back_;
  auto promise = kj::newAdaptedPromise<std::shared_ptr<Buffer>, Waiter>(*this, bytes,
                                                                         std::move(what));
  ScheduleRetry();
  return promise;
}

void ReceiveRoom::ScheduleRetry() {
  if (retrying_) return;
  retrying_ = true;
  retry_ = timer_.afterDelay(kRetryEvery).then([this]() { Retry(); }).eagerlyEvaluate(nullptr);
}

void ReceiveRoom::Retry() {
  retrying_ = false;
  const kj::TimePoint now = timer_.now();
  // Fulfilling removes a waiter from the list: walk a copy.
  const std::list<Waiter*> waiting = waiters_;
  bool blocked = false;
  for (Waiter* w : waiting) {
    if (!blocked && Fits(w->bytes())) {
      w->Fulfil(pool_.Get(w->bytes()));
    } else if (now - w->arrived() >= options_.hold_timeout) {
      w->Fulfil(errors::ResourceExhausted(
          w->what(), " (", w->bytes(), " bytes) waited ", options_.hold_timeout / kj::SECONDS,
          " s for room: this task holds ", pool_.stats().bytes_in_use,
          " bytes of received tensors, at most ", options_.max_held_bytes,
          " (--max-received-bytes)"));
    } else {
      blocked = true;  // first come, first served
    }
  }
  if (!waiters_.empty()) ScheduleRetry();
}

}  // namespace tfd
