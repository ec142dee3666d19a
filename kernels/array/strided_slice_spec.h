// TensorFlow's strided-slice specification resolved against an input shape:
// the five masks (begin, end, ellipsis, new_axis, shrink_axis) and negative
// strides turned into one (begin, stride, size) per input dimension and the
// output shape. StridedSlice, StridedSliceGrad and their shape functions all
// resolve through here, so they agree by construction.
//
//   StridedSliceMasks m{.begin = 1, .shrink_axis = 2};
//   TFD_ASSIGN_OR_RETURN(StridedSliceSpec s, ResolveStridedSlice(dims, begin, end, strides, m));
//   // input[s.begin[d] + i * s.stride[d]] for i < s.size[d]; output shape s.final_dims
//
// Thread-safety: free functions on values.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "common/attr_value.h"
#include "common/status.h"

namespace tfd::kernels::array {

struct StridedSliceMasks {
  int64_t begin = 0, end = 0, ellipsis = 0, new_axis = 0, shrink_axis = 0;
};

// The five *_mask attrs of a StridedSlice or StridedSliceGrad node.
StatusOr<StridedSliceMasks> MasksFromAttrs(const AttrMap& attrs);

struct StridedSliceSpec {
  // Per input dimension: the first index taken, the step, and how many.
  // size is -1 where the input dimension is unknown (shape functions).
  std::vector<int64_t> begin, stride, size;
  // The output's dimensions: size per input dimension, without the shrunk
  // ones and with a 1 for each new axis.
  std::vector<int64_t> final_dims;
};

// INVALID_ARGUMENT, naming the dimension, for a zero stride, begin, end and
// strides of different lengths, more than one ellipsis, a shrunk index out
// of range or a slice that names more dimensions than the input has.
// `dims` may hold -1 (unknown).
StatusOr<StridedSliceSpec> ResolveStridedSlice(const std::vector<int64_t>& dims,
                                               const std::vector<int64_t>& begin,
                                               const std::vector<int64_t>& end,
                                               const std::vector<int64_t>& strides,
                                               const StridedSliceMasks& masks);

// The output's dimensions when begin and end are not known before the run
// (x[i] with i a tensor): a new axis is 1, a dimension sliced whole (both
// masks set) is its extent over the stride when both are known, and every
// other dimension is -1; shrunk ones are left out. `n` is the number of
// entries in the slice; `strides` are theirs when known (else every
// dimension but the new axes is -1). INVALID_ARGUMENT as ResolveStridedSlice
// for a slice of more dimensions than the input has.
StatusOr<std::vector<int64_t>> StridedSliceDimsWithUnknownBounds(
    const std::vector<int64_t>& dims, int n, const std::optional<std::vector<int64_t>>& strides,
    const StridedSliceMasks& masks);

}  // namespace tfd::kernels::array
