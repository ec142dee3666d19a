#include "kernels/framework/intra_op_pool.h"

#define EIGEN_USE_THREADS
#include <unsupported/Eigen/CXX11/Tensor>

#include "common/allowed_cpus.h"
#include "common/op_kernel.h"

namespace tfd::kernels {

struct IntraOpPool::Threads {
  // No spinning: idle threads sleep at once rather than burn a CPU that the
  // executor's threads (or another task on the host) could use.
  explicit Threads(int n) : pool(n, /*allow_spinning=*/false), device(&pool, n) {}
  Eigen::ThreadPool pool;
  Eigen::ThreadPoolDevice device;
};

StatusOr<std::shared_ptr<IntraOpPool>> IntraOpPool::ForTask(const KernelEnv& env) {
  if (env.resources == nullptr) {
    return errors::FailedPrecondition("no resource manager for the task's intra-op threads");
  }
  const int threads = env.compute_threads > 0 ? env.compute_threads : NumAllowedCpus();
  if (threads <= 1) return std::shared_ptr<IntraOpPool>();
  return env.resources->LookupOrCreate<IntraOpPool>(
      kContainer, kName, [threads]() -> StatusOr<std::shared_ptr<IntraOpPool>> {
        return std::make_shared<IntraOpPool>(threads);
      });
}

IntraOpPool::IntraOpPool(int threads)
    : threads_(threads), impl_(std::make_unique<Threads>(threads)) {}

IntraOpPool::~IntraOpPool() = default;

const Eigen::ThreadPoolDevice& IntraOpPool::device() const { return impl_->device; }

std::string IntraOpPool::DebugString() const { return std::to_string(threads_) + " threads"; }

}  // namespace tfd::kernels
