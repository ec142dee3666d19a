// ThreadLoop: the KJ event loop of one Python thread (its home), shared by
// every runner made there (KJ allows one loop per thread), and the keeper
// of what those runners put on it. A runner that uses it does its Client's
// calls on the calling thread itself, as `tfctl train` does, instead of
// handing each call to a LoopThread and waiting to be woken (remote_runner.h): a
// step costs no thread hand-over.
//
// What lives on the loop (a client, the sessions that borrow it) may be
// used and destroyed on the home thread only, while the runner that made it
// may be dropped on any thread (a garbage collection there), before or
// after its home thread ends. So the loop keeps those objects itself
// (Keep), and Drop from another thread hands one back to the home thread,
// which destroys it at its next FreeOrphans (each runner's use calls it) or
// at its exit, whichever comes first; the home thread's exit destroys what
// its runners still kept, and the loop. The loop itself is made with the
// first object kept and goes once the home thread has destroyed the last,
// so that a thread whose sessions are gone holds no file descriptors.
//
//   std::shared_ptr<ThreadLoop> home = ThreadLoop::ForThisThread();
//   ThrowIfError(home->Check("MonitoredTrainingSession"));
//   ThreadLoop::Key key = home->Keep(std::make_unique<MyClient>());  // uses home->io()
//   ...
//   home->Drop(key);  // from any thread
//
// Thread-safety: ForThisThread, OnHomeThread, Check and Drop from any
// thread; Keep, io and FreeOrphans on the home thread only. Objects kept
// must not need the GIL to go (the home thread's exit has none).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <kj/async-io.h>

#include "common/mutex.h"
#include "common/status.h"
#include "common/thread_annotations.h"

namespace tfd::python {

class ThreadLoop {
 public:
  // Something kept on the loop: destroyed on the home thread only.
  class Resident {
   public:
    virtual ~Resident() = default;
  };
  using Key = int64_t;

  // The calling thread's loop: the one its runners share.
  static std::shared_ptr<ThreadLoop> ForThisThread();

  ThreadLoop();
  ThreadLoop(const ThreadLoop&) = delete;
  ThreadLoop& operator=(const ThreadLoop&) = delete;

  // The event loop, made now when none is alive. Home thread only.
  kj::AsyncIoContext& io();
  bool OnHomeThread() const { return std::this_thread::get_id() == home_; }
  // OK on the home thread; else FAILED_PRECONDITION naming `what`.
  Status Check(const std::string& what) const;

  // Keeps `resident` until Drop(key) or the home thread's exit. Home
  // thread only.
  Key Keep(std::unique_ptr<Resident> resident);
  // On the home thread: destroys the resident now (and the loop with the
  // last). On another: hands it to the home thread to destroy at its next
  // FreeOrphans or exit; nothing when the home thread has ended (its exit
  // destroyed it). Never waits for the home thread.
  void Drop(Key key);
  // Destroys what other threads dropped since. Home thread only.
  void FreeOrphans();

 private:
  class HomeExit;
  // Destroys every resident and the loop: the home thread's exit.
  void EndHome();
  // Destroys the loop once nothing is kept on it. Home thread only.
  void ReleaseLoopIfIdle();

  const std::thread::id home_;
  // The home thread's alone; declared first so that it goes last.
  std::optional<kj::AsyncIoContext> io_;

  Mutex mu_;
  std::map<Key, std::unique_ptr<Resident>> residents_ GUARDED_BY(mu_);
  std::vector<std::unique_ptr<Resident>> orphans_ GUARDED_BY(mu_);
  Key next_key_ GUARDED_BY(mu_) = 0;
};

}  // namespace tfd::python
