// Splitting one kernel's work over the task's intra-op threads
// (kernels/framework/intra_op_pool.h), for the convolution and pooling
// kernels: the work is cut into as many contiguous shards as there are
// threads when it is large enough to gain from them, else done in one piece
// on the calling thread.
//
//   class MyOp : public OpKernel {
//     void Compute(OpKernelContext& ctx) override {
//       ParallelFor(pool_.Get(ctx), rows, rows * cost_per_row,
//                   [&](int64_t first, int64_t last) { ... rows [first, last) ... });
//     }
//     LazyIntraOpPool pool_;
//   };
//
// Thread-safety: LazyIntraOpPool::Get may be called concurrently; the
// functions block the caller until every shard is done.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

namespace tfd {
class OpKernelContext;
}  // namespace tfd

namespace tfd::kernels {
class IntraOpPool;
}  // namespace tfd::kernels

namespace tfd::kernels::nn {

// Work (in multiply-adds, or comparable steps) from which a kernel's work is
// split: about 0.15 ms on one core of this era. Handing a shard to another
// thread costs some 10-30 us, so below this the split gains little and
// loses when the other CPUs are busy.
inline constexpr double kMinParallelWork = double{1 << 22};

// The task's intra-op pool, looked up on the first call (as MatMul does).
class LazyIntraOpPool {
 public:
  // Null when the task has one compute thread or no ResourceMgr.
  const IntraOpPool* Get(const OpKernelContext& ctx);

 private:
  std::once_flag once_;
  std::shared_ptr<IntraOpPool> pool_;  // written once, under once_
};

// Shards for n independent items costing `work` in all: 1 without a pool or
// below kMinParallelWork, else min(n, the pool's threads).
int64_t NumShards(const IntraOpPool* pool, int64_t n, double work);

// fn(shard) for each shard in [0, shards), on the pool's threads when
// shards > 1 (pool then non-null); returns when all are done.
void RunShards(const IntraOpPool* pool, int64_t shards, const std::function<void(int64_t)>& fn);

// fn(first, last) over [0, n), cut into NumShards(pool, n, work) near-equal
// ranges.
void ParallelFor(const IntraOpPool* pool, int64_t n, double work,
                 const std::function<void(int64_t, int64_t)>& fn);

// The range of shard `shard` of `shards` over [0, n).
inline std::pair<int64_t, int64_t> ShardRange(int64_t n, int64_t shards, int64_t shard) {
  return {n * shard / shards, n * (shard + 1) / shards};
}

}  // namespace tfd::kernels::nn
