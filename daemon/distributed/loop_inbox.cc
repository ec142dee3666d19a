#include "daemon/distributed/loop_inbox.h"

namespace tfd {

LoopInbox::LoopInbox() : loop_thread_(std::this_thread::get_id()) {}

LoopInbox::~LoopInbox() { Stop(); }

kj::Promise<void> LoopInbox::Run() {
  std::vector<std::function<void()>> work;
  {
    MutexLock lock(mu_);
    if (stopped_) return kj::NEVER_DONE;
    if (queue_.empty()) {
      auto paf = kj::newPromiseAndCrossThreadFulfiller<void>();
      waiting_ = kj::mv(paf.fulfiller);
      return paf.promise.then([this] { return Run(); });
    }
    work.swap(queue_);
  }
  for (auto& w : work) w();
  // Through the loop's queue, so that a steady stream of posts cannot keep
  // the loop from its other events.
  return kj::evalLater([this] { return Run(); });
}

bool LoopInbox::Post(std::function<void()> work) {
  if (OnLoopThread()) {
    {
      MutexLock lock(mu_);
      if (stopped_) return false;
    }
    work();
    return true;
  }
  kj::Maybe<kj::Own<kj::CrossThreadPromiseFulfiller<void>>> wake;
  {
    MutexLock lock(mu_);
    if (stopped_) return false;
    queue_.push_back(std::move(work));
    wake = kj::mv(waiting_);
    waiting_ = nullptr;
  }
  // Fulfilled (and destroyed) outside the lock; the loop may be waking.
  KJ_IF_MAYBE(w, wake) { (*w)->fulfill(); }
  return true;
}

void LoopInbox::Stop() {
  std::vector<std::function<void()>> dropped;
  {
    MutexLock lock(mu_);
    stopped_ = true;
    dropped.swap(queue_);
  }
}

}  // namespace tfd
