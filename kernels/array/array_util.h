// Helpers shared by the array kernels and their shape functions: reading
// small integer inputs (shapes, axes, permutations), normalising negative
// axes, and moving elements of any dtype (strings included) between tensors.
//
//   TFD_ASSIGN_OR_RETURN(auto dims, IntsFromTensor(ctx.input(1), "shape"));
//   TFD_ASSIGN_OR_RETURN(int axis, CanonicalAxis(-1, x.rank(), "axis"));
//   CopyElements(src, 0, dst, 10, 5);
//
// Thread-safety: free functions on values.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "common/shape_inference.h"
#include "common/status.h"
#include "common/tensor.h"

namespace tfd::kernels::array {

// The values of an int32/int64 tensor of rank 0 or 1. `what` names the input
// in the error ("shape must be a vector of int32 or int64, got float32[2]").
StatusOr<std::vector<int64_t>> IntsFromTensor(const Tensor& t, const char* what);
// The value of an int32/int64 scalar (or one-element vector, as TensorFlow
// accepts for axes).
StatusOr<int64_t> IntFromScalar(const Tensor& t, const char* what);

// `axis` in [-rank, rank) mapped to [0, rank); INVALID_ARGUMENT otherwise.
StatusOr<int> CanonicalAxis(int64_t axis, int rank, const char* what);

// Product of dims[begin, end).
int64_t DimProduct(const std::vector<int64_t>& dims, int begin, int end);

// Copies n elements from src (starting at element src_pos) into dst (at
// dst_pos). Both tensors must have the same dtype; strings are copied as
// objects, everything else as bytes.
void CopyElements(const Tensor& src, int64_t src_pos, const Tensor& dst, int64_t dst_pos,
                  int64_t n);

// A view of `count` consecutive elements of t starting at flat position
// `begin`, shaped `shape` (whose size must be count). Shares t's buffer.
StatusOr<Tensor> FlatView(const Tensor& t, int64_t begin, const TensorShape& shape);

// Pad's and MirrorPad's paddings input as {before, after} per dimension:
// INVALID_ARGUMENT unless it is [rank, 2] and non-negative.
StatusOr<std::vector<std::pair<int64_t, int64_t>>> ReadPaddings(const Tensor& p, int rank);
// Their shape function: input 0's dimensions, each grown by its paddings
// (input 1) when they are known.
Status PaddedShape(InferenceContext& c);

// Shape-function helper: the shape described by a known 1-D shape input
// (dims < 0 become unknown), or, when only its length is known, a shape of
// that rank with unknown dims; Unknown otherwise.
PartialShape ShapeFromShapeInput(const InferenceContext& c, int i);

}  // namespace tfd::kernels::array
