// IdxBatchOpBase: the draw, and the batch drawn ahead.
#include "kernels/data/idx_batch_op.h"

#include <utility>

#include "common/allowed_cpus.h"

namespace tfd::kernels::data {

IdxBatchOpBase::IdxBatchOpBase(OpKernelConstruction& c) : OpKernel(c) {
  c.SetStatus(c.GetAttr("batch_size", &batch_size_));
  c.SetStatus(c.GetAttr("drop_remainder", &drop_remainder_));
  c.SetStatus(c.GetAttr("prefetch", &prefetch_));
  // The prefetch thread lives on CPU time the steps leave. A task allowed
  // one CPU leaves only the moments its step waits for another task, and
  // there the thread cost more than it saved: it is preempted mid-batch
  // (the step then makes the batch itself), and waking the step from a
  // running thread took longer than from an idle CPU. 1 ps + 1 worker
  // with the worker in its trainer's process ran 2-15 % faster without it
  // (bench/NOTES.md, "Training").
  prefetch_ = prefetch_ && NumAllowedCpus() > 1;
  // Bounds the index list a batch builds before any output is allocated.
  if (c.status().ok() && batch_size_ > kMaxTensorElements) {
    c.SetStatus(errors::InvalidArgument("batch_size ", batch_size_, " exceeds the largest ",
                                        "tensor (", kMaxTensorElements, " elements)"));
  }
}

void IdxBatchOpBase::Compute(OpKernelContext& ctx) {
  auto ds = ctx.input_ref<IdxDataset>(0);
  TFD_OP_REQUIRES_OK(ctx, ds.status());
  IdxDataset& dataset = **ds;
  TFD_OP_REQUIRES_OK(ctx, dataset.BindReader(ctx.step().session));
  const KernelEnv& env = ctx.env();
  std::optional<StatusOr<BatchTensors>> tensors = TakeAhead(dataset, ctx.deadline());
  if (!tensors) {
    auto batch = dataset.Next(batch_size_, drop_remainder_);
    TFD_OP_REQUIRES_OK(ctx, batch.status());
    tensors = Maker(std::move(*batch), env)();
  }
  TFD_OP_REQUIRES_OK(ctx, tensors->status());
  ctx.set_output(0, std::move((*tensors)->images));
  ctx.set_output(1, std::move((*tensors)->labels));
  if (prefetch_) PrepareAhead(dataset, env);
}

// The batch drawn ahead by the last step, if the dataset still holds it
// for this node; nullopt when there is none (draw now).
std::optional<StatusOr<BatchTensors>> IdxBatchOpBase::TakeAhead(
    IdxDataset& dataset, std::chrono::steady_clock::time_point deadline) {
  std::shared_ptr<PreparedBatch> prepared;
  {
    MutexLock lock(mu_);
    if (ahead_ && dataset.Commit(ahead_->ticket)) prepared = std::move(ahead_->prepared);
    ahead_.reset();
  }
  if (!prepared) return std::nullopt;
  return prepared->Take(deadline);
}

// Draws the next batch now and has the dataset's thread make its tensors.
// A draw that fails (the dataset is exhausted) is left to the next step,
// which meets the same error.
void IdxBatchOpBase::PrepareAhead(IdxDataset& dataset, const KernelEnv& env) {
  auto reserved = dataset.Reserve(batch_size_, drop_remainder_);
  if (!reserved.ok()) return;
  auto prepared = std::make_shared<PreparedBatch>(Maker(std::move(reserved->batch), env));
  {
    MutexLock lock(mu_);
    ahead_ = Ahead{reserved->ticket, prepared};
  }
  dataset.prefetch_thread().Post(std::move(prepared));
}

}  // namespace tfd::kernels::data
