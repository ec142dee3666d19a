// SparseConditionalAccumulator: a sum of rows by index on AccumulatorCore.
#include "kernels/data_flow/sparse_conditional_accumulator.h"

#include <cstring>

#include "common/tensor_eigen.h"

namespace tfd::kernels {
namespace {

// row += other, `n` elements of the float dtype.
void AddElements(DType dtype, char* row, const char* other, int64_t n) {
  TFD_SWITCH_FLOAT(dtype, T, {
    T* out = reinterpret_cast<T*>(row);
    const T* in = reinterpret_cast<const T*>(other);
    for (int64_t i = 0; i < n; ++i) out[i] += in[i];
  }, {});
}

void DivideElements(DType dtype, char* data, int64_t n, int64_t divisor) {
  TFD_SWITCH_FLOAT(dtype, T, {
    T* out = reinterpret_cast<T*>(data);
    for (int64_t i = 0; i < n; ++i) out[i] /= static_cast<T>(divisor);
  }, {});
}

// values' shape past the first dimension.
TensorShape RowShape(const Tensor& values) {
  TensorShape row = values.shape();
  row.RemoveDim(0);
  return row;
}

const char* ReductionName(SparseReduction r) { return r == SparseReduction::kMean ? "MEAN" : "SUM"; }

}  // namespace

StatusOr<SparseSum> SparseSum::Start(const SparseGradient& g) {
  SparseSum sum;
  sum.dtype_ = g.values.dtype();
  sum.row_shape_ = RowShape(g.values);
  sum.row_bytes_ = sum.row_shape_.num_elements() * DTypeSize(sum.dtype_);
  sum.data_.reserve(static_cast<size_t>(g.values.dim(0) * sum.row_bytes_));
  sum.Add(g);
  return sum;
}

void SparseSum::AddRow(int64_t index, const char* row) {
  const auto [it, inserted] = row_of_.emplace(index, static_cast<int64_t>(row_of_.size()));
  if (inserted) {
    data_.insert(data_.end(), row, row + row_bytes_);
  } else {
    AddElements(dtype_, data_.data() + it->second * row_bytes_, row, row_shape_.num_elements());
  }
}

// `g` was checked: int64 indices, one row of row_shape_ per index.
void SparseSum::Add(const SparseGradient& g) {
  if (!dense_shape_) dense_shape_ = g.dense_shape;
  const int64_t* indices = g.indices.data<int64_t>();
  const char* values = static_cast<const char*>(g.values.raw_data());
  for (int64_t i = 0; i < g.indices.num_elements(); ++i) {
    AddRow(indices[i], values + i * row_bytes_);
  }
}

void SparseSum::Merge(SparseSum&& other) {
  if (!dense_shape_) dense_shape_ = other.dense_shape_;
  for (const auto& [index, row] : other.row_of_) {
    AddRow(index, other.data_.data() + row * other.row_bytes_);
  }
}

StatusOr<SparseGradient> SparseSum::Finish(int64_t divisor) const {
  const auto n = static_cast<int64_t>(row_of_.size());
  TensorShape values_shape = row_shape_;
  values_shape.InsertDim(0, n);
  TFD_ASSIGN_OR_RETURN(Tensor indices, Tensor::Allocate(DType::kInt64, TensorShape({n})));
  TFD_ASSIGN_OR_RETURN(Tensor values, Tensor::Allocate(dtype_, values_shape));
  int64_t* out_index = indices.data<int64_t>();
  char* out_rows = static_cast<char*>(values.raw_data());
  for (const auto& [index, row] : row_of_) {
    *out_index++ = index;
    if (row_bytes_ > 0) std::memcpy(out_rows, data_.data() + row * row_bytes_, row_bytes_);
    out_rows += row_bytes_;
  }
  if (divisor != 1) DivideElements(dtype_, static_cast<char*>(values.raw_data()),
                                   values.num_elements(), divisor);
  return SparseGradient{std::move(indices), std::move(values), dense_shape_};
}

SparseConditionalAccumulator::SparseConditionalAccumulator(std::string name, DType dtype,
                                                           PartialShape shape,
                                                           SparseReduction reduction)
    : AccumulatorCore(std::move(name)),
      dtype_(dtype),
      shape_(std::move(shape)),
      reduction_(reduction) {}

std::string SparseConditionalAccumulator::DebugString() const {
  const AccumulatorCounts c = Counts();
  return errors::StrCat("sparse accumulator '", name(), "': ", DTypeName(dtype_),
                        shape_.ToString(), " ", ReductionName(reduction_), ", ", c.accumulated,
                        " gradients, global step ", c.global_step, ", ", c.stale_dropped,
                        " stale dropped, ", c.duplicates_dropped, " duplicates dropped");
}

Status SparseConditionalAccumulator::CheckSameSpec(DType dtype, const PartialShape& shape,
                                                   SparseReduction reduction) const {
  if (dtype != dtype_ || !(shape == shape_) || reduction != reduction_) {
    return errors::InvalidArgument("sparse accumulator '", name(), "' holds ", DTypeName(dtype_),
                                   shape_.ToString(), " gradients (", ReductionName(reduction_),
                                   ") but this node declares ", DTypeName(dtype),
                                   shape.ToString(), " (", ReductionName(reduction), ")");
  }
  return OkStatus();
}

StatusOr<SparseConditionalAccumulator::ApplyResult> SparseConditionalAccumulator::Apply(
    int64_t local_step, const SparseGradient& gradient, std::string_view replica) {
  TFD_RETURN_IF_ERROR(CheckGradient(gradient));
  return Accumulate(local_step, gradient, replica,
                    [this](const SparseSum& held, int64_t count, const SparseGradient& g) {
                      return FitsHeld(held, count, g);
                    });
}

void SparseConditionalAccumulator::TakeAverage(int64_t num_required, CancellationManager* cm,
                                               TakeDone done) {
  const bool mean = reduction_ == SparseReduction::kMean;
  TakeSum(num_required, cm,
          [mean, done = std::move(done)](const Status& s, std::optional<SparseSum> sum,
                                         int64_t count) {
            if (!s.ok()) return done(s, SparseGradient{});
            // Outside the lock: the rows are copied out and reduced here.
            auto rows = sum->Finish(mean ? count : 1);
            if (!rows.ok()) return done(rows.status(), SparseGradient{});
            done(s, std::move(*rows));
          });
}

Status SparseConditionalAccumulator::CheckGradient(const SparseGradient& g) const {
  if (g.indices.dtype() != DType::kInt64 || g.indices.rank() != 1) {
    return errors::InvalidArgument("sparse accumulator '", name(),
                                   "' takes int64 indices of shape [n] but got ",
                                   g.indices.Describe());
  }
  if (g.values.dtype() != dtype_) {
    return errors::InvalidArgument("sparse accumulator '", name(), "' takes ", DTypeName(dtype_),
                                   " values but got ", g.values.Describe());
  }
  if (g.values.rank() < 1 || g.values.dim(0) != g.indices.dim(0)) {
    return errors::InvalidArgument("sparse accumulator '", name(), "' got ", g.indices.dim(0),
                                   " indices but values of shape ", g.values.shape().ToString(),
                                   " (one row per index expected)");
  }
  if (shape_.rank_known()) {
    bool fits = g.values.rank() == shape_.rank();
    for (int i = 1; fits && i < shape_.rank(); ++i) {
      fits = shape_.dim(i) < 0 || shape_.dim(i) == g.values.dim(i);
    }
    if (!fits) {
      return errors::InvalidArgument("sparse accumulator '", name(), "' holds rows of ",
                                     shape_.ToString(), " but got values of shape ",
                                     g.values.shape().ToString());
    }
  }
  if (g.dense_shape) {
    bool fits = shape_.IsCompatibleWith(*g.dense_shape) && g.dense_shape->rank() == g.values.rank();
    for (int i = 1; fits && i < g.values.rank(); ++i) fits = g.dense_shape->dim(i) == g.values.dim(i);
    if (!fits) {
      return errors::InvalidArgument("sparse accumulator '", name(), "' of shape ",
                                     shape_.ToString(), " got a gradient of dense shape ",
                                     g.dense_shape->ToString(), " with values of shape ",
                                     g.values.shape().ToString());
    }
  }
  return CheckIndices(g.indices, g.dense_shape);
}

Status SparseConditionalAccumulator::CheckIndices(const Tensor& indices,
                                                  const std::optional<TensorShape>& dense) const {
  int64_t rows = -1;  // unbounded
  if (shape_.rank_known() && shape_.dim(0) >= 0) {
    rows = shape_.dim(0);
  } else if (dense) {
    rows = dense->dim(0);
  }
  const int64_t* index = indices.data<int64_t>();
  for (int64_t i = 0; i < indices.num_elements(); ++i) {
    if (index[i] < 0 || (rows >= 0 && index[i] >= rows)) {
      return errors::InvalidArgument("sparse accumulator '", name(), "' got index ", index[i],
                                     " (at position ", i, ") outside [0, ",
                                     rows >= 0 ? std::to_string(rows) : std::string("inf"), ")");
    }
  }
  return OkStatus();
}

Status SparseConditionalAccumulator::FitsHeld(const SparseSum& held, int64_t count,
                                              const SparseGradient& g) const {
  const TensorShape row = RowShape(g.values);
  const bool shapes_agree = !g.dense_shape || !held.dense_shape() || *g.dense_shape == *held.dense_shape();
  if (row == held.row_shape() && shapes_agree) return OkStatus();
  return errors::InvalidArgument(
      "sparse accumulator '", name(), "' holds ", count, " gradients of rows ",
      held.row_shape().ToString(), " (dense shape ",
      held.dense_shape() ? held.dense_shape()->ToString() : std::string("unknown"),
      ") but got rows ", row.ToString(), " (dense shape ",
      g.dense_shape ? g.dense_shape->ToString() : std::string("unknown"), ")");
}

}  // namespace tfd::kernels
