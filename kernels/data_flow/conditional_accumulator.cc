// ConditionalAccumulator: a dense sum on AccumulatorCore.
#include "kernels/data_flow/conditional_accumulator.h"

#include "common/tensor_eigen.h"

namespace tfd::kernels {
namespace {

void DivideBy(const Tensor& t, int64_t count) {
  TFD_SWITCH_FLOAT(t.dtype(), T, { EigenFlat<T>(t) /= static_cast<T>(count); }, {});
}

}  // namespace

StatusOr<DenseSum> DenseSum::Start(const Tensor& g) {
  TFD_ASSIGN_OR_RETURN(Tensor copy, g.DeepCopy());
  return DenseSum{std::move(copy)};
}

// sum += g, element-wise; both of the accumulator's dtype and shape.
void DenseSum::Add(const Tensor& g) {
  TFD_SWITCH_FLOAT(sum.dtype(), T, { EigenFlat<T>(sum) += EigenFlat<T>(g); }, {});
}

ConditionalAccumulator::ConditionalAccumulator(std::string name, DType dtype, PartialShape shape)
    : AccumulatorCore(std::move(name)), dtype_(dtype), shape_(std::move(shape)) {}

std::string ConditionalAccumulator::DebugString() const {
  const AccumulatorCounts c = Counts();
  return errors::StrCat("accumulator '", name(), "': ", DTypeName(dtype_), shape_.ToString(), ", ",
                        c.accumulated, " gradients, global step ", c.global_step, ", ",
                        c.stale_dropped, " stale dropped, ", c.duplicates_dropped,
                        " duplicates dropped");
}

Status ConditionalAccumulator::CheckSameSpec(DType dtype, const PartialShape& shape) const {
  if (dtype != dtype_ || !(shape == shape_)) {
    return errors::InvalidArgument("accumulator '", name(), "' holds ", DTypeName(dtype_),
                                   shape_.ToString(), " gradients but this node declares ",
                                   DTypeName(dtype), shape.ToString());
  }
  return OkStatus();
}

StatusOr<ConditionalAccumulator::ApplyResult> ConditionalAccumulator::Apply(
    int64_t local_step, const Tensor& gradient, std::string_view replica) {
  if (gradient.dtype() != dtype_) {
    return errors::InvalidArgument("accumulator '", name(), "' takes ", DTypeName(dtype_),
                                   " gradients but got ", gradient.Describe());
  }
  if (!shape_.IsCompatibleWith(gradient.shape())) {
    return errors::InvalidArgument("accumulator '", name(), "' takes gradients of shape ",
                                   shape_.ToString(), " but got shape ",
                                   gradient.shape().ToString());
  }
  const auto fits = [this](const DenseSum& held, int64_t count, const Tensor& g) {
    if (held.sum.shape() == g.shape()) return OkStatus();
    return errors::InvalidArgument("accumulator '", name(), "' holds ", count,
                                   " gradients of shape ", held.sum.shape().ToString(),
                                   " but got shape ", g.shape().ToString());
  };
  return Accumulate(local_step, gradient, replica, fits);
}

void ConditionalAccumulator::TakeAverage(int64_t num_required, CancellationManager* cm,
                                         TakeDone done) {
  TakeSum(num_required, cm,
          [done = std::move(done)](const Status& s, std::optional<DenseSum> sum, int64_t count) {
            if (!s.ok()) return done(s, Tensor());
            // The sum is ours alone (never handed out before), so it becomes
            // the average in place, outside the lock.
            DivideBy(sum->sum, count);
            done(s, std::move(sum->sum));
          });
}

}  // namespace tfd::kernels
