// The state family's per-file registration functions and the helper its
// kernels share. Private to kernels/state.
#pragma once

#include <cstdint>
#include <memory>

#include "common/op_kernel.h"
#include "kernels/state/variable.h"

namespace tfd::kernels::state {

Status RegisterVariableOps(OpRegistry& r);  // variable_ops.cc
Status RegisterTrainingOps(OpRegistry& r);  // training_ops.cc
Status RegisterScatterOps(OpRegistry& r);   // scatter_ops.cc
Status RegisterSparseTrainingOps(OpRegistry& r);  // sparse_training_ops.cc

// The largest dense updates that run on the thread that made them ready
// (OpKernel::cheap_up_to_elements) rather than on the compute pool: on a ps,
// the event loop that received the gradient. Each is what the update gets
// through on one core in about 10 µs, the event loop's share of a hand-off
// to the pool (a ps at 1 async worker: 60 µs of the loop per step, with 12
// more on the compute threads, against 48 with the update inline;
// bench/NOTES.md, "Scale"). Measured in one process, float32, a variable of
// 8 K to 256 K elements updated step after step (bench/NOTES.md, "Updates
// inline by size"): AssignAdd 4-7 K elements per µs, ApplyGradientDescent
// 5-10 K, ApplyMomentum 3.5-5 K, ApplyAdam 0.9-1.1 K. A larger update (a
// 5.8 M-parameter layer's) would hold the loop for milliseconds: it goes to
// the pool, whose threads also split it (training_ops.cc).
inline constexpr int64_t kCheapAssignUpdateElements = 32 * 1024;  // AssignAdd, AssignSub
inline constexpr int64_t kCheapGradientDescentElements = 32 * 1024;
inline constexpr int64_t kCheapMomentumElements = 32 * 1024;
inline constexpr int64_t kCheapAdamElements = 8 * 1024;

// Reference input `i` as a Variable of dtype `dtype`: INVALID_ARGUMENT when
// it is not a variable or holds another dtype.
StatusOr<std::shared_ptr<Variable>> VariableInput(const OpKernelContext& ctx, int i, DType dtype);

// Shape-function helpers: input i must be a scalar; inputs `idx` must agree.
Status ScalarInput(InferenceContext& c, int i, const char* what);
StatusOr<PartialShape> MergeInputs(InferenceContext& c, std::initializer_list<int> idx);

}  // namespace tfd::kernels::state
