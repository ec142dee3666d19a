#include "kernels/framework/intra_op_pool.h"

#define EIGEN_USE_THREADS
#include <unsupported/Eigen/CXX11/Tensor>

#include "common/allowed_cpus.h"

namespace tfd::kernels {

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
        return std::make_shared<IntraOpPool>(NumAllowedCpus());
      });
}

IntraOpPool::IntraOpPool(int threads)
    : threads_(threads), impl_(std::make_unique<Threads>(threads)) {}

IntraOpPool::~IntraOpPool() = default;

const Eigen::ThreadPoolDevice& IntraOpPool::device() const { return impl_->device; }

std::string IntraOpPool::DebugString() const { return std::to_string(threads_) + " threads"; }

}  // namespace tfd::kernels
