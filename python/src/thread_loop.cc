#include "python/src/thread_loop.h"

#include <utility>

namespace tfd::python {

// The home thread's hold on its ThreadLoop, from its first runner to its
// exit, which destroys what the runners still keep there and the loop: the
// last moment the home thread can.
class ThreadLoop::HomeExit {
 public:
  ~HomeExit() {
    if (loop) loop->EndHome();
  }
  std::shared_ptr<ThreadLoop> loop;
};

std::shared_ptr<ThreadLoop> ThreadLoop::ForThisThread() {
  thread_local HomeExit home;
  if (!home.loop) home.loop = std::make_shared<ThreadLoop>();
  home.loop->FreeOrphans();
  return home.loop;
}

ThreadLoop::ThreadLoop() : home_(std::this_thread::get_id()) {}

kj::AsyncIoContext& ThreadLoop::io() {
  if (!io_) io_.emplace(kj::setupAsyncIo());
  return *io_;
}

Status ThreadLoop::Check(const std::string& what) const {
  if (OnHomeThread()) return OkStatus();
  return errors::FailedPrecondition(what, " is used from another thread than the one that made "
                                    "it: its connection lives on that thread's event loop");
}

ThreadLoop::Key ThreadLoop::Keep(std::unique_ptr<Resident> resident) {
  MutexLock lock(mu_);
  const Key key = next_key_++;
  residents_.emplace(key, std::move(resident));
  return key;
}

void ThreadLoop::Drop(Key key) {
  std::unique_ptr<Resident> dropped;
  {
    MutexLock lock(mu_);
    auto it = residents_.find(key);
    if (it == residents_.end()) return;  // the home thread's exit destroyed it
    dropped = std::move(it->second);
    residents_.erase(it);
    if (!OnHomeThread()) {
      orphans_.push_back(std::move(dropped));
      return;
    }
  }
  dropped.reset();  // outside the lock: its destructor may take a while
  ReleaseLoopIfIdle();
}

void ThreadLoop::FreeOrphans() {
  std::vector<std::unique_ptr<Resident>> orphans;
  {
    MutexLock lock(mu_);
    orphans.swap(orphans_);
  }
  if (orphans.empty()) return;
  orphans.clear();
  ReleaseLoopIfIdle();
}

void ThreadLoop::ReleaseLoopIfIdle() {
  {
    // Only the home thread adds residents, and orphans come from them:
    // none can appear once both are empty.
    MutexLock lock(mu_);
    if (!residents_.empty() || !orphans_.empty()) return;
  }
  io_.reset();
}

void ThreadLoop::EndHome() {
  std::map<Key, std::unique_ptr<Resident>> residents;
  std::vector<std::unique_ptr<Resident>> orphans;
  {
    MutexLock lock(mu_);
    residents.swap(residents_);
    orphans.swap(orphans_);
  }
  orphans.clear();
  residents.clear();
  io_.reset();
}

}  // namespace tfd::python
