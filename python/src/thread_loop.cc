#include "python/src/thread_loop.h"

namespace tfd::python {

std::shared_ptr<ThreadLoop> ThreadLoop::ForThisThread() {
  // Weak: the runners own the loop, so that it goes (on this thread) with
  // the last of them rather than at the thread's exit, after Python's end.
  thread_local std::weak_ptr<ThreadLoop> current;
  std::shared_ptr<ThreadLoop> loop = current.lock();
  if (!loop) {
    loop = std::make_shared<ThreadLoop>();
    current = loop;
  }
  return loop;
}

ThreadLoop::ThreadLoop() : home_(std::this_thread::get_id()), io_(kj::setupAsyncIo()) {}

Status ThreadLoop::Check(const std::string& what) const {
  if (OnHomeThread()) return OkStatus();
  return errors::FailedPrecondition(what, " is used from another thread than the one that made "
                                    "it: its connection lives on that thread's event loop");
}

}  // namespace tfd::python
