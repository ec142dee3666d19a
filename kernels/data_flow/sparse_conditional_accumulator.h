// SparseConditionalAccumulator: sums the sparse gradients (rows and their
// indices, TF's IndexedSlices) that synchronous replicas send for one
// variable, keeping them sparse, so what a replica pushes and what the take
// hands out grow with the rows touched, never with the variable
// (TensorFlow's SparseConditionalAccumulator).
//
// Rows of equal index add up, within one gradient and across them. The
// global step, stale and duplicate gradients, and how a take waits are
// AccumulatorCore's, shared with the dense ConditionalAccumulator. A take
// hands out the rows touched, sorted by index, divided by the number of
// gradients taken (MEAN, as the dense accumulator averages: an untouched row
// counts as a zero gradient) or not divided (SUM).
//
//   auto acc = std::make_shared<SparseConditionalAccumulator>(
//       "acc", DType::kFloat32, PartialShape({1000, 8}), SparseReduction::kMean);
//   acc->TakeAverage(2, &cm, [](const Status& s, SparseGradient avg) { ... });
//   acc->Apply(0, {indices0, values0, {}}, "/job:worker/replica:0/task:0");
//   acc->Apply(0, {indices1, values1, {}}, "/job:worker/replica:0/task:1");
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/tensor.h"
#include "kernels/data_flow/accumulator_core.h"

namespace tfd::kernels {

// Rows of a tensor: values[i] is row indices[i] of a tensor of dense_shape.
struct SparseGradient {
  Tensor indices;  // int64 [n]
  Tensor values;   // [n, row...]
  std::optional<TensorShape> dense_shape;  // when the sender knows it
};

// How a take reduces the gradients it takes (TF's reduction_type).
enum class SparseReduction { kMean, kSum };

// A sparse sum: each index's row, once, in a buffer of the values' dtype.
class SparseSum {
 public:
  using Gradient = SparseGradient;
  static StatusOr<SparseSum> Start(const SparseGradient& g);
  void Add(const SparseGradient& g);
  void Merge(SparseSum&& other);

  const TensorShape& row_shape() const { return row_shape_; }
  const std::optional<TensorShape>& dense_shape() const { return dense_shape_; }
  // The rows sorted by index, each divided by `divisor` (1: as summed).
  StatusOr<SparseGradient> Finish(int64_t divisor) const;

 private:
  void AddRow(int64_t index, const char* row);

  DType dtype_ = DType::kInvalid;
  TensorShape row_shape_;
  int64_t row_bytes_ = 0;
  std::optional<TensorShape> dense_shape_;
  std::map<int64_t, int64_t> row_of_;  // index -> its row in data_
  std::vector<char> data_;             // rows in the order first seen
};

class SparseConditionalAccumulator : public AccumulatorCore<SparseSum> {
 public:
  using TakeDone = std::function<void(const Status&, SparseGradient average)>;

  // `dtype` is float32 or float64 (checked by the op's attr); `shape` is the
  // variable's (rank >= 1 when known): rows must fit its dimensions past the
  // first, indices lie in [0, shape[0]).
  SparseConditionalAccumulator(std::string name, DType dtype, PartialShape shape,
                               SparseReduction reduction);

  std::string_view Kind() const override { return "sparse_accumulator"; }
  // "sparse accumulator 'acc': float32[1000, 8] MEAN, 2 gradients, global step 7, ...".
  std::string DebugString() const override;

  DType dtype() const { return dtype_; }
  const PartialShape& shape() const { return shape_; }

  // INVALID_ARGUMENT unless made with exactly these settings.
  Status CheckSameSpec(DType dtype, const PartialShape& shape, SparseReduction reduction) const;

  // As ConditionalAccumulator::Apply, for rows. INVALID_ARGUMENT naming the
  // accumulator for indices that are not int64 [n], values of another dtype
  // or with a row count other than n, rows that do not fit the shape or the
  // rows already in, a dense_shape that does not fit, or an index outside
  // [0, rows) (rows: shape[0], else dense_shape[0] when known).
  StatusOr<ApplyResult> Apply(int64_t local_step, const SparseGradient& gradient,
                              std::string_view replica = {});

  // As ConditionalAccumulator::TakeAverage: the rows touched, reduced.
  void TakeAverage(int64_t num_required, CancellationManager* cm, TakeDone done);

 private:
  Status CheckGradient(const SparseGradient& g) const;
  Status CheckIndices(const Tensor& indices, const std::optional<TensorShape>& dense) const;
  Status FitsHeld(const SparseSum& held, int64_t count, const SparseGradient& g) const;

  const DType dtype_;
  const PartialShape shape_;
  const SparseReduction reduction_;
};

}  // namespace tfd::kernels
