#include "kernels/nn/parallel_shards.h"

#include <algorithm>

#include "common/op_kernel.h"
#include "kernels/framework/intra_op_pool.h"

#define EIGEN_USE_THREADS
#include <unsupported/Eigen/CXX11/Tensor>

namespace tfd::kernels::nn {

const IntraOpPool* LazyIntraOpPool::Get(const OpKernelContext& ctx) {
  std::call_once(once_, [&] {
    auto pool = IntraOpPool::ForTask(ctx.env());
    if (pool.ok()) pool_ = *std::move(pool);
  });
  return pool_.get();
}

int64_t NumShards(const IntraOpPool* pool, int64_t n, double work) {
  if (pool == nullptr || n <= 1 || work < kMinParallelWork) return 1;
  return std::min<int64_t>(n, pool->threads());
}

void RunShards(const IntraOpPool* pool, int64_t shards, const std::function<void(int64_t)>& fn) {
  if (shards <= 1 || pool == nullptr) {
    if (shards == 1) fn(0);
    return;
  }
  // A cost far above Eigen's task-size threshold makes it run one shard per
  // task, each on its own thread (the caller takes one).
  const Eigen::TensorOpCost per_shard(0, 0, 1e9);
  pool->device().parallelFor(shards, per_shard, [&fn](Eigen::Index first, Eigen::Index last) {
    for (Eigen::Index s = first; s < last; ++s) fn(s);
  });
}

void ParallelFor(const IntraOpPool* pool, int64_t n, double work,
                 const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  const int64_t shards = NumShards(pool, n, work);
  RunShards(pool, shards, [&](int64_t shard) {
    const auto [first, last] = ShardRange(n, shards, shard);
    if (first < last) fn(first, last);
  });
}

}  // namespace tfd::kernels::nn
