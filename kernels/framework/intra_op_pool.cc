#include "kernels/framework/intra_op_pool.h"

#define EIGEN_USE_THREADS
#include <unsupported/Eigen/CXX11/Tensor>

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "common/allowed_cpus.h"
#include "common/op_kernel.h"
#include "common/thread_name.h"

namespace tfd::kernels {

namespace {

// Eigen's StlThreadEnvironment with each thread named "intra-op N". A new
// thread would otherwise carry the name of the one that started it: the
// first kernel that needs the pool, on an executor thread ("compute N"), so
// that `top -H` and a count of a task's compute threads saw twice as many.
struct NamedThreadEnvironment {
  struct Task {
    std::function<void()> f;
  };
  class EnvThread {
   public:
    explicit EnvThread(std::function<void()> f) : thread_(std::move(f)) {}
    ~EnvThread() { thread_.join(); }
    void OnCancel() {}

   private:
    std::thread thread_;
  };

  // Eigen owns what this returns (its pool deletes each thread, joining it).
  EnvThread* CreateThread(std::function<void()> f) {
    const int index = started++;  // the pool's constructor starts them in turn
    return std::make_unique<EnvThread>([f = std::move(f), index] {
             NameThisThread("intra-op " + std::to_string(index));
             f();
           })
        .release();
  }
  Task CreateTask(std::function<void()> f) { return Task{std::move(f)}; }
  void ExecuteTask(const Task& t) { t.f(); }

  int started = 0;
};

}  // namespace

struct IntraOpPool::Threads {
  // No spinning: idle threads sleep at once rather than burn a CPU that the
  // executor's threads (or another task on the host) could use.
  explicit Threads(int n) : pool(n, /*allow_spinning=*/false), device(&pool, n) {}
  Eigen::ThreadPoolTempl<NamedThreadEnvironment> pool;
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
