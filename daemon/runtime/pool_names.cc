#include "daemon/runtime/pool_names.h"

#include <boost/asio/post.hpp>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <string>

#include "common/mutex.h"
#include "common/thread_name.h"

namespace tfd {
namespace {

// Shared with the naming tasks, which may outlive the wait if a thread of the
// pool is busy past the deadline.
struct Roll {
  Mutex mu;
  std::condition_variable changed;
  int started GUARDED_BY(mu) = 0;
  int finished GUARDED_BY(mu) = 0;
};

constexpr std::chrono::seconds kWait{5};

}  // namespace

void NamePoolThreads(boost::asio::thread_pool& pool, int threads, std::string_view prefix) {
  auto roll = std::make_shared<Roll>();
  for (int i = 0; i < threads; ++i) {
    boost::asio::post(pool, [roll, threads, name = std::string(prefix) + " " + std::to_string(i)] {
      NameThisThread(name);
      MutexLock lock(roll->mu);
      ++roll->started;
      roll->changed.notify_all();
      // A thread that is done at once would take the next naming task too.
      lock.WaitFor(roll->changed, kWait,
                   [&]() REQUIRES(roll->mu) { return roll->started == threads; });
      ++roll->finished;
      roll->changed.notify_all();
    });
  }
  MutexLock lock(roll->mu);
  lock.WaitFor(roll->changed, 2 * kWait,
               [&]() REQUIRES(roll->mu) { return roll->finished == threads; });
}

}  // namespace tfd
