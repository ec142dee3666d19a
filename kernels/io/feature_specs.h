// What ParseExample (parse_example_op.cc) and ParseFeatureLists
// (parse_sequence_op.cc) share: their attrs, which say the type of each
// sparse feature and the type and shape of each dense one, read and
// checked in one place; and the sparse outputs both make from rows of
// feature values (an example's, or a sequence's step's).
#pragma once

#include <cstdint>
#include <vector>

#include "common/op_kernel.h"
#include "common/shape_inference.h"
#include "kernels/io/example_proto.h"

namespace tfd::kernels::io {

struct FeatureSpecs {
  int64_t num_sparse = 0, num_dense = 0;
  std::vector<DType> sparse_types, dense_types;
  std::vector<PartialShape> dense_shapes;

  // The attrs Nsparse, Ndense, sparse_types, Tdense and dense_shapes of
  // `c`'s node, checked: lists as long as the counts, every type float32,
  // int64 or string, every dense shape fully defined (or, with
  // `sequences`, [-1] + a fully defined block shape). Errors go to `c`.
  static FeatureSpecs Read(OpKernelConstruction& c, bool sequences);
};

// A FixedLenSequenceFeature's dense shape: [-1] + a fully defined one.
bool IsSequenceShape(const PartialShape& s);

// The feature (or feature list) name that input `input` holds;
// INVALID_ARGUMENT naming `what` unless it is a string scalar.
StatusOr<std::string> FeatureKey(const OpKernelContext& ctx, int input, const char* what);

// Sparse feature i's outputs (indices i, values num_sparse + i, shape
// 2 * num_sparse + i): the values of each row (null: none) as indices
// [n, 2] (row, position), values [n] and shape [rows, longest].
Status SetSparseOutputs(OpKernelContext& ctx, int64_t num_sparse, int64_t i,
                        const std::vector<const ExampleFeature*>& rows);

// The static shapes of both kernels' outputs, from their attrs: [?, 2],
// [?] and [2] per sparse feature, [rows] + dense_shape per dense one
// (rows -1 when unknown).
Status SetParsedShapes(InferenceContext& c, int64_t rows);

}  // namespace tfd::kernels::io
