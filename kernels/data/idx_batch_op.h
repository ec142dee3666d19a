// What IdxNextBatch and CifarNextBatch share: drawing the next batch of an
// IdxDataset (an in-memory dataset of images and labels, IDX or CIFAR) and,
// with prefetch, drawing the one after it and having the dataset's thread
// make its tensors while the step computes. A subclass says only how a
// batch becomes tensors (Maker).
//
//   class MyNextBatchOp : public IdxBatchOpBase {
//     using IdxBatchOpBase::IdxBatchOpBase;
//     PreparedBatch::Make Maker(IdxDataset::Batch b, const KernelEnv& env) const override;
//   };
//
// The op's attrs must include batch_size, drop_remainder and prefetch.
// Thread-safety: as any kernel; Compute may run on several steps at once.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

#include "common/mutex.h"
#include "common/op_kernel.h"
#include "kernels/data/batch_prefetch.h"
#include "kernels/data/idx_dataset.h"

namespace tfd::kernels::data {

class IdxBatchOpBase : public OpKernel {
 public:
  explicit IdxBatchOpBase(OpKernelConstruction& c);
  void Compute(OpKernelContext& ctx) final;

 protected:
  // A function making `batch`'s outputs (images, labels) as this node's
  // outputs would be allocated (env's limits and budget). It may run on the
  // dataset's thread after this kernel is gone, so it holds copies only.
  virtual PreparedBatch::Make Maker(IdxDataset::Batch batch, const KernelEnv& env) const = 0;

  int64_t batch_size() const { return batch_size_; }

 private:
  std::optional<StatusOr<BatchTensors>> TakeAhead(IdxDataset& dataset,
                                                  std::chrono::steady_clock::time_point deadline);
  void PrepareAhead(IdxDataset& dataset, const KernelEnv& env);

  struct Ahead {
    uint64_t ticket;
    std::shared_ptr<PreparedBatch> prepared;
  };

  int64_t batch_size_ = 1;
  bool drop_remainder_ = false;
  bool prefetch_ = true;
  Mutex mu_;
  std::optional<Ahead> ahead_ GUARDED_BY(mu_);
};

}  // namespace tfd::kernels::data
