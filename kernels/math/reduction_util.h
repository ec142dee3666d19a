// The geometry of a reduction: which axes are reduced (validated, negative
// axes counted from the end), the output shape, and the input collapsed to
// the fewest dimensions — size-1 dims dropped, neighbours of the same kind
// merged — so that kernels see a full reduction, a row reduction
// ([kept, reduced]), a column reduction ([reduced, kept]) or, rarely, a
// general pattern that MoveReducedLast turns into a row reduction.
//
//   TFD_ASSIGN_OR_RETURN(ReductionPlan p, MakeReductionPlan(x.shape(), {-1}, false));
//   // x [2, 3, 4]: p.output_shape [2, 3], p.dims {6, 4}, p.reduced {false, true}
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "common/shape.h"
#include "common/status.h"
#include "common/tensor.h"

namespace tfd::kernels {

// The axes of a scalar or vector int32/int64 tensor (reduction_indices,
// axis arguments); INVALID_ARGUMENT naming `what` for another rank or dtype.
StatusOr<std::vector<int64_t>> AxesFromTensor(const Tensor& t, const char* what);

// A rank-sized mask of the reduced axes. Axes lie in [-rank, rank);
// duplicates are allowed. INVALID_ARGUMENT names the first bad axis.
StatusOr<std::vector<bool>> ReductionMask(const std::vector<int64_t>& axes, int rank);

struct ReductionPlan {
  TensorShape output_shape;  // reduced axes removed, or kept as 1 (keep_dims)
  int64_t out_count = 1;     // elements of the output
  int64_t reduce_count = 1;  // input elements folded into each output element
  // The collapsed input (meaningful when the input is non-empty).
  std::vector<int64_t> dims;
  std::vector<bool> reduced;
};

StatusOr<ReductionPlan> MakeReductionPlan(const TensorShape& input,
                                          const std::vector<int64_t>& axes, bool keep_dims);

// ArgMax / ArgMin's geometry: x viewed as [outer, n, inner] around one axis.
struct ArgReductionPlan {
  int axis = 0;              // in [0, rank)
  TensorShape output_shape;  // x's shape without `axis`
  int64_t outer = 1, n = 1, inner = 1;
};

// Checks `dimension` (a scalar in [-rank, rank)) against x and that the axis
// is not empty: INVALID_ARGUMENT otherwise, with TensorFlow's wording.
StatusOr<ArgReductionPlan> MakeArgReductionPlan(const Tensor& x, const Tensor& dimension);

// Copies the collapsed input `in` to `out` reordered so that all kept dims
// come first and all reduced dims last; each output element's inputs then
// form one contiguous row of reduce_count elements.
template <typename T>
void MoveReducedLast(const ReductionPlan& p, const T* in, T* out) {
  const int r = static_cast<int>(p.dims.size());
  std::vector<int64_t> stride(r);
  int64_t total = 1;
  for (int d = r - 1; d >= 0; --d) {
    stride[d] = total;
    total *= p.dims[d];
  }
  if (total == 0 || r == 0) return;
  std::vector<int64_t> pd, ps;  // dims and input strides in output order
  for (bool want_reduced : {false, true}) {
    for (int d = 0; d < r; ++d) {
      if (p.reduced[d] == want_reduced) {
        pd.push_back(p.dims[d]);
        ps.push_back(stride[d]);
      }
    }
  }
  const int64_t inner = pd.back(), inner_stride = ps.back();
  std::vector<int64_t> index(r - 1, 0);
  int64_t offset = 0;
  for (int64_t o = 0; o < total; o += inner) {
    for (int64_t j = 0; j < inner; ++j) out[o + j] = in[offset + j * inner_stride];
    for (int d = r - 2; d >= 0; --d) {
      offset += ps[d];
      if (++index[d] < pd[d]) break;
      offset -= ps[d] * pd[d];
      index[d] = 0;
    }
  }
}

}  // namespace tfd::kernels
