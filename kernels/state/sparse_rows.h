// Helpers of the kernels that update chosen rows of a variable (the Scatter*
// ops, the SparseApply* optimizers): reading an int32/int64 index tensor with
// every index checked against the variable's rows before anything is written,
// and checking that per-row data has the variable's row shape.
//
//   std::vector<int64_t> rows;
//   TFD_RETURN_IF_ERROR(RowIndices(ctx.input(1), value.dim(0), var, &rows));
//   TFD_RETURN_IF_ERROR(CheckRowData(ctx.input(2), "updates", ctx.input(1), value, var));
//
// Thread-safety: free functions on values.
#pragma once

#include <cstdint>
#include <vector>

#include "common/shape_inference.h"
#include "common/status.h"
#include "common/tensor.h"
#include "kernels/state/variable.h"

namespace tfd::kernels::state {

// The values of `indices` (int32 or int64, any shape) in flat order, each
// checked to lie in [0, rows): INVALID_ARGUMENT naming the position, the value
// and the variable otherwise ("indices[2] = 7 is not in [0, 5) (the rows of
// variable 'w')"). On error `out` is left in an unspecified state.
Status RowIndices(const Tensor& indices, int64_t rows, const Variable& var,
                  std::vector<int64_t>* out);

// `data` (the input called `what`) must hold one row of `value` per index:
// shape indices.shape + value.shape[1:]. INVALID_ARGUMENT saying what was
// expected otherwise. `value` must have rank >= 1.
Status CheckRowData(const Tensor& data, const char* what, const Tensor& indices,
                    const Tensor& value, const Variable& var);

// INVALID_ARGUMENT unless `value` (the variable's current value) has rank >= 1:
// rows need a first dimension.
Status CheckHasRows(const Tensor& value, const Variable& var, std::string_view op);

}  // namespace tfd::kernels::state

namespace tfd::kernels::state {

// Shape-function helper: when the shapes are known far enough, input
// `data_idx` (called `what`) must be compatible with input `indices_idx`'s
// shape + input `var_idx`'s shape[1:], and the variable must have rank >= 1.
// `allow_scalar`: a scalar data input is also accepted (broadcast to every row).
Status CheckRowDataShape(const InferenceContext& c, int var_idx, int indices_idx, int data_idx,
                         const char* what, bool allow_scalar);

}  // namespace tfd::kernels::state
