// Building ReductionPlans: axis validation, output shape and the collapse.
#include "kernels/math/reduction_util.h"

namespace tfd::kernels {

StatusOr<std::vector<int64_t>> AxesFromTensor(const Tensor& t, const char* what) {
  if (t.rank() > 1) {
    return errors::InvalidArgument(what, " must be a scalar or a vector, got shape ",
                                   t.shape().ToString());
  }
  std::vector<int64_t> axes(t.num_elements());
  if (t.dtype() == DType::kInt32) {
    for (size_t i = 0; i < axes.size(); ++i) axes[i] = t.data<int32_t>()[i];
  } else if (t.dtype() == DType::kInt64) {
    for (size_t i = 0; i < axes.size(); ++i) axes[i] = t.data<int64_t>()[i];
  } else {
    return errors::InvalidArgument(what, " must be int32 or int64, got ", DTypeName(t.dtype()));
  }
  return axes;
}

StatusOr<std::vector<bool>> ReductionMask(const std::vector<int64_t>& axes, int rank) {
  std::vector<bool> mask(rank, false);
  for (int64_t a : axes) {
    if (a < -rank || a >= rank) {
      return errors::InvalidArgument("Invalid reduction dimension ", a, " for input with ", rank,
                                     " dimensions (axes must lie in [", -rank, ", ", rank,
                                     "))");
    }
    mask[a < 0 ? a + rank : a] = true;
  }
  return mask;
}

StatusOr<ReductionPlan> MakeReductionPlan(const TensorShape& input,
                                          const std::vector<int64_t>& axes, bool keep_dims) {
  TFD_ASSIGN_OR_RETURN(std::vector<bool> mask, ReductionMask(axes, input.rank()));
  ReductionPlan p;
  std::vector<int64_t> out_dims;
  for (int d = 0; d < input.rank(); ++d) {
    const int64_t size = input.dim(d);
    if (mask[d]) {
      p.reduce_count *= size;
      if (keep_dims) out_dims.push_back(1);
    } else {
      out_dims.push_back(size);
    }
    // Size-1 dims change no element's position; merging neighbours of one
    // kind keeps the row-major order too.
    if (size == 1) continue;
    if (!p.dims.empty() && p.reduced.back() == mask[d]) {
      p.dims.back() *= size;
    } else {
      p.dims.push_back(size);
      p.reduced.push_back(mask[d]);
    }
  }
  p.output_shape = TensorShape(out_dims);
  p.out_count = p.output_shape.num_elements();
  return p;
}

StatusOr<ArgReductionPlan> MakeArgReductionPlan(const Tensor& x, const Tensor& dimension) {
  if (dimension.rank() != 0) {
    return errors::InvalidArgument("dimension must be a scalar, got shape ",
                                   dimension.shape().ToString());
  }
  TFD_ASSIGN_OR_RETURN(std::vector<int64_t> axes, AxesFromTensor(dimension, "dimension"));
  const int64_t a = axes[0];
  const int rank = x.rank();
  if (a < -rank || a >= rank) {
    return errors::InvalidArgument("Expected dimension in the range [", -rank, ", ", rank,
                                   "), but got ", a, " for input of shape ", x.shape().ToString());
  }
  ArgReductionPlan p;
  p.axis = static_cast<int>(a < 0 ? a + rank : a);
  if (x.dim(p.axis) == 0) {
    return errors::InvalidArgument("Reduction axis ", p.axis, " is empty in shape ",
                                   x.shape().ToString());
  }
  p.output_shape = x.shape();
  p.output_shape.RemoveDim(p.axis);
  p.n = x.dim(p.axis);
  for (int d = 0; d < p.axis; ++d) p.outer *= x.dim(d);
  for (int d = p.axis + 1; d < rank; ++d) p.inner *= x.dim(d);
  return p;
}

}  // namespace tfd::kernels
