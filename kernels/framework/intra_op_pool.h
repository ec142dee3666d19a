// IntraOpPool: the threads one large kernel splits its work over (Eigen's
// ThreadPoolDevice), shared by every kernel of a task. It is a resource of
// the task's ResourceMgr, made on the first large computation, so a task
// whose kernels are all small never starts a thread; it goes, joining its
// threads, with the ResourceMgr.
//
//   TFD_ASSIGN_OR_RETURN(auto pool, IntraOpPool::ForTask(ctx.env()));
//   if (pool) c.device(pool->device()) = a.contract(b, dims);   // blocks until done
//
// Only kernels that split one computation use it; the executor's pool runs
// whole kernels. This header leaves out Eigen's Tensor module (heavy to
// compile): code that uses device() includes <unsupported/Eigen/CXX11/Tensor>
// after defining EIGEN_USE_THREADS.
//
// Thread-safety: device() may be used from any thread, concurrently.
#pragma once

#include <memory>
#include <string>

#include "common/resource_mgr.h"

namespace Eigen {
struct ThreadPoolDevice;
}  // namespace Eigen

namespace tfd {
struct KernelEnv;
}  // namespace tfd

namespace tfd::kernels {

// TODO(cleanup): the task should build this with its other pools and pass
// it in KernelEnv, as it passes the size; until then the ResourceMgr holds
// it, made by the first kernel that needs it.
class IntraOpPool : public ResourceBase {
 public:
  // Where in the ResourceMgr the task's pool lives.
  static constexpr const char* kContainer = "_kernels";
  static constexpr const char* kName = "intra_op_pool";

  // The task's pool, made on the first call with env.compute_threads threads
  // (tfd's --threads), or one per CPU this process may run on. Null, and no
  // thread started, where that is one: the work stays on the caller. A
  // FAILED_PRECONDITION without env.resources.
  static StatusOr<std::shared_ptr<IntraOpPool>> ForTask(const KernelEnv& env);

  explicit IntraOpPool(int threads);
  ~IntraOpPool() override;

  const Eigen::ThreadPoolDevice& device() const;
  int threads() const { return threads_; }

  std::string_view Kind() const override { return "intra-op thread pool"; }
  std::string DebugString() const override;

 private:
  struct Threads;
  const int threads_;
  std::unique_ptr<Threads> impl_;
};

}  // namespace tfd::kernels
