// The arithmetic of CollectiveReduce: how one member's segment is merged
// into another's (merge_op) and what is done to the reduced result
// (final_op), for the dtypes the op takes. Pure functions over raw
// elements, so the ring (ring_all_reduce.h) and the tests share them.
//
//   TFD_ASSIGN_OR_RETURN(MergeOp m, ParseMergeOp("Add"));
//   Merge(DType::kFloat32, m, out, a, b, n);     // out[k] = a[k] + b[k]
//   Finalize(DType::kFloat32, FinalOp::kDiv, out, n, 4);   // out[k] /= 4
//
// Floating point follows IEEE and numpy: NaN propagates through Min and
// Max as through Add (np.minimum, np.maximum), inf + -inf is NaN. Integer
// Add and Mul wrap around on overflow, as numpy's do; integer Div truncates
// toward zero, as TensorFlow's does.
//
// Thread-safety: stateless.
#pragma once

#include <cstdint>
#include <string>

#include "common/dtype.h"
#include "common/status.h"

namespace tfd::kernels {

enum class MergeOp { kAdd, kMul, kMin, kMax };
enum class FinalOp { kId, kDiv };

// INVALID_ARGUMENT naming the value and the accepted ones.
StatusOr<MergeOp> ParseMergeOp(const std::string& name);
StatusOr<FinalOp> ParseFinalOp(const std::string& name);
// Whether the op reduces `dtype` (float32, float64, int32, int64).
bool IsCollectiveType(DType dtype);

// out[k] = a[k] (merge) b[k] for k < n; `out` may be `a` or `b`.
void Merge(DType dtype, MergeOp op, void* out, const void* a, const void* b, int64_t n);
// The final op over out[0, n) of a group of `group_size` members.
void Finalize(DType dtype, FinalOp op, void* out, int64_t n, int group_size);

}  // namespace tfd::kernels
