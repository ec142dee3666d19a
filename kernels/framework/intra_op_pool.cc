#include "kernels/framework/intra_op_pool.h"

#include <sched.h>

#include <algorithm>
#include <thread>

#define EIGEN_USE_THREADS
#include <unsupported/Eigen/CXX11/Tensor>

namespace tfd::kernels {
namespace {

// The CPUs this process may run on: a task pinned to some CPUs (taskset, a
// cgroup's cpuset) gets no more threads than it can use.
int AllowedCpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace

struct IntraOpPool::Threads {
  // No spinning: idle threads sleep at once rather than burn a CPU that the
  // executor's threads (or another task on the host) could use.
  explicit Threads(int n) : pool(n, /*allow_spinning=*/false), device(&pool, n) {}
  Eigen::ThreadPool pool;
  Eigen::ThreadPoolDevice device;
};

StatusOr<std::shared_ptr<IntraOpPool>> IntraOpPool::ForTask(ResourceMgr& resources) {
  return resources.LookupOrCreate<IntraOpPool>(
      kContainer, kName, []() -> StatusOr<std::shared_ptr<IntraOpPool>> {
        return std::make_shared<IntraOpPool>(AllowedCpus());
      });
}

IntraOpPool::IntraOpPool(int threads)
    : threads_(threads), impl_(std::make_unique<Threads>(threads)) {}

IntraOpPool::~IntraOpPool() = default;

const Eigen::ThreadPoolDevice& IntraOpPool::device() const { return impl_->device; }

std::string IntraOpPool::DebugString() const { return std::to_string(threads_) + " threads"; }

}  // namespace tfd::kernels
