// ConditionalAccumulator: averages the gradients that synchronous replicas
// send for one variable, held in a task's ResourceMgr so that every worker's
// graph naming it shares it (TensorFlow's ConditionalAccumulator, MEAN).
//
// It keeps a sum, a count and a global step; stale and duplicate gradients,
// and how a take waits, are AccumulatorCore's (accumulator_core.h), shared
// with the SparseConditionalAccumulator.
//
//   auto acc = std::make_shared<ConditionalAccumulator>("acc", DType::kFloat32,
//                                                       PartialShape({-1, 10}));
//   acc->TakeAverage(2, &cm, [](const Status& s, Tensor avg) { ... });
//   acc->Apply(/*local_step=*/0, g0, "/job:worker/replica:0/task:0");
//   acc->Apply(0, g1, "/job:worker/replica:0/task:1");  // the take completes
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <string>
#include <string_view>

#include "common/tensor.h"
#include "kernels/data_flow/accumulator_core.h"

namespace tfd::kernels {

// A dense sum: one tensor, owned, added into in place.
struct DenseSum {
  using Gradient = Tensor;
  static StatusOr<DenseSum> Start(const Tensor& g);
  void Add(const Tensor& g);
  void Merge(DenseSum&& other) { Add(other.sum); }
  Tensor sum;
};

class ConditionalAccumulator : public AccumulatorCore<DenseSum> {
 public:
  using TakeDone = std::function<void(const Status&, Tensor average)>;

  // `dtype` is float32 or float64 (checked by the op's attr); every gradient
  // must fit `shape`.
  ConditionalAccumulator(std::string name, DType dtype, PartialShape shape);

  std::string_view Kind() const override { return "accumulator"; }
  // "accumulator 'acc': float32[?, 10], 2 gradients, global step 7, 1 stale dropped".
  std::string DebugString() const override;

  DType dtype() const { return dtype_; }
  const PartialShape& shape() const { return shape_; }

  // INVALID_ARGUMENT unless made with exactly these settings (another graph
  // declaring the same shared accumulator differently).
  Status CheckSameSpec(DType dtype, const PartialShape& shape) const;

  // Adds `gradient` when local_step >= the global step, else drops it as
  // stale. `replica` names who computed it (the task whose session ran the
  // step, StepContext::master): a replica that already has a gradient in
  // since the last take is not counted again (kDuplicate); an empty replica
  // (a session in one process) is never taken for a duplicate.
  // INVALID_ARGUMENT (naming both shapes) for a gradient of another dtype, or
  // whose shape does not fit the declared shape or, while any are
  // accumulated, the shape of those; checked for dropped gradients too.
  StatusOr<ApplyResult> Apply(int64_t local_step, const Tensor& gradient,
                              std::string_view replica = {});

  // Once at least `num_required` (>= 1) gradients are in: `done` gets their
  // average, the accumulator is emptied and the global step advances by one.
  // With the cancellation's code (saying what it waited for, have and need)
  // if `cm` cancels first.
  void TakeAverage(int64_t num_required, CancellationManager* cm, TakeDone done);

 private:
  const DType dtype_;
  const PartialShape shape_;
};

}  // namespace tfd::kernels
