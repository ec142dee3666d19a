// LoopInbox: hands work from the compute pool to the event loop without
// waiting for it.
//
// kj::Executor::executeSync blocks the calling thread until the loop has
// run the work, and executeAsync needs an event loop on the calling thread,
// which pool threads do not have. A kernel that pushes a tensor (a _Send on
// the pool) only needs the push started: here it queues the work, wakes the
// loop if it sleeps, and goes on with the step. Work posted from the loop
// thread itself runs at once, as executeSync would.
//
//   LoopInbox inbox;                      // on the loop thread
//   auto draining = inbox.Run();          // keep it; it never resolves
//   inbox.Post([] { ... on the loop ... });  // from any thread
//   inbox.Stop();                         // later posts are refused
//
// Thread-safety: Post and Stop from any thread; the constructor and Run on
// the loop thread.
#pragma once

#include <kj/async.h>

#include <functional>
#include <thread>
#include <vector>

#include "common/mutex.h"

namespace tfd {

class LoopInbox {
 public:
  LoopInbox();
  ~LoopInbox();
  LoopInbox(const LoopInbox&) = delete;
  LoopInbox& operator=(const LoopInbox&) = delete;

  // Runs posted work on the loop, in the order posted, until dropped.
  kj::Promise<void> Run();
  // Queues `work` for the loop (or runs it now, on the loop thread). False
  // when the inbox has stopped: the work is dropped without running.
  bool Post(std::function<void()> work);
  void Stop();

  bool OnLoopThread() const { return std::this_thread::get_id() == loop_thread_; }

 private:
  const std::thread::id loop_thread_;
  Mutex mu_;
  std::vector<std::function<void()>> queue_ GUARDED_BY(mu_);
  // Set while Run waits for work; taken by the Post that wakes it.
  kj::Maybe<kj::Own<kj::CrossThreadPromiseFulfiller<void>>> waiting_ GUARDED_BY(mu_);
  bool stopped_ GUARDED_BY(mu_) = false;
};

}  // namespace tfd
