// The intra-op pool's threads carry names of their own ("intra-op N"), not
// the name of the executor thread that happened to start the pool: a count
// of a task's "compute" threads (bench/tfd_cluster.h, Placement) or `top -H`
// shows the executor's pool and the intra-op pool apart.
#define EIGEN_USE_THREADS
#include <unsupported/Eigen/CXX11/Tensor>

#include <pthread.h>

#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <thread>

#include "common/mutex.h"
#include "common/thread_name.h"
#include "kernels/framework/intra_op_pool.h"

namespace tfd::kernels {
namespace {

// The calling thread's name as the kernel keeps it (what /proc and top show).
std::string KernelThreadName() {
  char name[16] = {};
  pthread_getname_np(pthread_self(), name, sizeof name);
  return name;
}

TEST_CASE("the intra-op threads are named apart from the thread that starts them") {
  std::set<std::string> names;
  std::thread starter([&names] {
    NameThisThread("compute 0");  // as an executor thread that runs the first large kernel
    const IntraOpPool pool(3);
    Mutex mu;
    // Blocks that each take a while, so that the work spreads over the
    // pool's threads (parallelFor runs some of it on this thread too).
    pool.device().parallelFor(64, Eigen::TensorOpCost(0, 0, 1e6),
                              [&](Eigen::Index begin, Eigen::Index end) {
                                const std::string name = KernelThreadName();
                                MutexLock lock(mu);
                                names.insert(name);
                                (void)begin, (void)end;
                              });
  });
  starter.join();
  INFO("thread names seen: " << names.size());
  size_t intra_op = 0;
  for (const std::string& n : names) {
    INFO(n);
    CHECK((n == "compute 0" || n.rfind("intra-op ", 0) == 0));
    if (n.rfind("intra-op ", 0) == 0) ++intra_op;
  }
  CHECK(intra_op >= 1);
}

}  // namespace
}  // namespace tfd::kernels
