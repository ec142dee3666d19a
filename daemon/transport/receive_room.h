// ReceiveRoom: the buffers that pushed tensors land in, and the rule that a
// task holds at most `max_held_bytes` of received tensors at once.
//
// A receive asks for its buffer with Reserve: it gets one at once when the
// tensor fits beside what is held; otherwise it waits (the sender's push
// stays pending: back-pressure) until room is made or `hold_timeout`
// passes, and then fails with RESOURCE_EXHAUSTED naming the tensor and the
// limit. A tensor larger than the limit fails at once. Waiters are served
// in the order they came. Room is made when received tensors die, which may
// happen on any thread, so waiters look again every few milliseconds.
//
// Buffers come from a pool reused across steps (common/buffer_pool.h), so a
// steady stream of steps takes no page faults.
//
//   ReceiveRoom room(timer, {.max_held_bytes = 4 << 30});
//   room.Reserve(bytes, "tensor 'w' of step 7 from /job:ps/...").then(
//       [](std::shared_ptr<Buffer> b) { ... receive into b->data() ... });
//
// Thread-safety: event-loop thread only (the pool itself is thread-safe).
#pragma once

#include <kj/async.h>
#include <kj/timer.h>

#include <list>
#include <memory>
#include <string>

#include "common/buffer_pool.h"

namespace tfd {

class ReceiveRoom {
 public:
  struct Options {
    size_t max_held_bytes = size_t{4} << 30;
    kj::Duration hold_timeout = 30 * kj::SECONDS;
    size_t max_cached_bytes = size_t{1} << 30;
  };

  ReceiveRoom(kj::Timer& timer, Options options);
  ~ReceiveRoom();
  ReceiveRoom(const ReceiveRoom&) = delete;
  ReceiveRoom& operator=(const ReceiveRoom&) = delete;

  // A buffer of `bytes` once it fits (see above). `what` names the tensor
  // in the error. Dropping the promise gives up the wait.
  kj::Promise<std::shared_ptr<Buffer>> Reserve(size_t bytes, std::string what);
  // A buffer now if `bytes` fits, else RESOURCE_EXHAUSTED (for eager
  // receives, whose bytes are already here).
  StatusOr<std::shared_ptr<Buffer>> TakeNow(size_t bytes, const std::string& what);

  BufferPool::Stats pool_stats() const { return pool_.stats(); }
  uint64_t held_back() const { return held_back_; }  // reserves that had to wait
  const Options& options() const { return options_; }

 private:
  class Waiter;

  bool Fits(size_t bytes) const;
  Status TooLarge(size_t bytes, const std::string& what) const;
  void ScheduleRetry();
  void Retry();

  kj::Timer& timer_;
  const Options options_;
  BufferPool pool_;
  std::list<Waiter*> waiters_;  // oldest first
  kj::Promise<void> retry_ = nullptr;
  bool retrying_ = false;
  uint64_t held_back_ = 0;
};

}  // namespace tfd
