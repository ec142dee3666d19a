// The state family's per-file registration functions and the helper its
// kernels share. Private to kernels/state.
#pragma once

#include <memory>

#include "common/op_kernel.h"
#include "kernels/state/variable.h"

namespace tfd::kernels::state {

Status RegisterVariableOps(OpRegistry& r);  // variable_ops.cc
Status RegisterTrainingOps(OpRegistry& r);  // training_ops.cc
Status RegisterScatterOps(OpRegistry& r);   // scatter_ops.cc
Status RegisterSparseTrainingOps(OpRegistry& r);  // sparse_training_ops.cc

// Reference input `i` as a Variable of dtype `dtype`: INVALID_ARGUMENT when
// it is not a variable or holds another dtype.
StatusOr<std::shared_ptr<Variable>> VariableInput(const OpKernelContext& ctx, int i, DType dtype);

// Shape-function helpers: input i must be a scalar; inputs `idx` must agree.
Status ScalarInput(InferenceContext& c, int i, const char* what);
StatusOr<PartialShape> MergeInputs(InferenceContext& c, std::initializer_list<int> idx);

}  // namespace tfd::kernels::state
