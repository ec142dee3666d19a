// Private to the random family: the per-file registration functions that
// RegisterRandomOps calls, and what the random kernels share.
#pragma once

#include "common/op_kernel.h"
#include "common/op_registry.h"
#include "kernels/random/random_source.h"

namespace tfd::kernels::random {

Status RegisterSampleOps(OpRegistry& registry);   // random_sample_ops.cc
Status RegisterShuffleOps(OpRegistry& registry);  // random_shuffle_op.cc

// A kernel that owns a seeded stream, built from its "seed" and "seed2"
// attrs (see GuardedPhilox for what they mean).
class RandomOpBase : public OpKernel {
 public:
  explicit RandomOpBase(OpKernelConstruction& c);

 protected:
  GuardedPhilox& stream() { return stream_; }

 private:
  GuardedPhilox stream_;
};

// The shape held by a "shape" input: a vector of non-negative int32/int64
// dimensions. INVALID_ARGUMENT names what is wrong.
StatusOr<TensorShape> ShapeFromTensor(const Tensor& shape);

// Shape function for ops whose output `output` has the shape held by input
// `input`: exact when that input is a constant, else of the vector's length
// when that is known.
Status ShapeFromShapeInput(InferenceContext& c, int input, int output);

}  // namespace tfd::kernels::random
