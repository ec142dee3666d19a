// ThreadLoop: the KJ event loop of one Python thread, made by the first
// runner that asks for it on that thread and shared by every runner made
// there after (KJ allows one loop per thread). A runner that holds one does
// its Client's calls on the calling thread itself, as `tfctl train` does,
// instead of handing each call to a LoopThread and waiting to be woken
// (sessions.h): a step costs no thread hand-over.
//
// The price is that such a runner serves only its home thread: a call from
// another is FAILED_PRECONDITION (Check), and what lives on the loop can be
// destroyed on the home thread only.
//
//   std::shared_ptr<ThreadLoop> home = ThreadLoop::ForThisThread();
//   ThrowIfError(home->Check("MonitoredTrainingSession"));
//   client = Client::Connect(home->io(), ...);
//
// Thread-safety: ForThisThread from any thread; the rest on the home
// thread only (Check says whether the caller is on it). The loop is
// destroyed with its last holder, which must be on the home thread.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include <kj/async-io.h>

#include "common/status.h"

namespace tfd::python {

class ThreadLoop {
 public:
  // The calling thread's loop: the one its runners share, made now when
  // none is alive.
  static std::shared_ptr<ThreadLoop> ForThisThread();

  ThreadLoop();
  ThreadLoop(const ThreadLoop&) = delete;
  ThreadLoop& operator=(const ThreadLoop&) = delete;

  kj::AsyncIoContext& io() { return io_; }
  bool OnHomeThread() const { return std::this_thread::get_id() == home_; }
  // OK on the home thread; else FAILED_PRECONDITION naming `what`.
  Status Check(const std::string& what) const;

 private:
  const std::thread::id home_;
  kj::AsyncIoContext io_;
};

}  // namespace tfd::python
