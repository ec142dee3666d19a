#include "kernels/collective/reduce_math.h"

#include <cmath>
#include <type_traits>

namespace tfd::kernels {
namespace {

// Integers wrap on overflow (numpy's behaviour); computed unsigned, where
// wrapping is defined.
template <typename T>
T Wrapped(T a, T b, MergeOp op) {
  using U = std::make_unsigned_t<T>;
  const U ua = static_cast<U>(a), ub = static_cast<U>(b);
  return static_cast<T>(op == MergeOp::kAdd ? U(ua + ub) : U(ua * ub));
}

template <typename T>
void MergeT(MergeOp op, T* out, const T* a, const T* b, int64_t n) {
  switch (op) {
    case MergeOp::kAdd:
    case MergeOp::kMul:
      if constexpr (std::is_floating_point_v<T>) {
        if (op == MergeOp::kAdd) {
          for (int64_t k = 0; k < n; ++k) out[k] = a[k] + b[k];
        } else {
          for (int64_t k = 0; k < n; ++k) out[k] = a[k] * b[k];
        }
      } else {
        for (int64_t k = 0; k < n; ++k) out[k] = Wrapped(a[k], b[k], op);
      }
      return;
    case MergeOp::kMin:
      for (int64_t k = 0; k < n; ++k) {
        // a NaN on either side wins, as in np.minimum
        out[k] = (a[k] != a[k]) ? a[k] : (b[k] != b[k] || b[k] < a[k]) ? b[k] : a[k];
      }
      return;
    case MergeOp::kMax:
      for (int64_t k = 0; k < n; ++k) {
        out[k] = (a[k] != a[k]) ? a[k] : (b[k] != b[k] || b[k] > a[k]) ? b[k] : a[k];
      }
      return;
  }
}

template <typename T>
void DivT(T* out, int64_t n, int group_size) {
  const T d = static_cast<T>(group_size);
  for (int64_t k = 0; k < n; ++k) out[k] = out[k] / d;
}

}  // namespace

StatusOr<MergeOp> ParseMergeOp(const std::string& name) {
  if (name == "Add") return MergeOp::kAdd;
  if (name == "Mul") return MergeOp::kMul;
  if (name == "Min") return MergeOp::kMin;
  if (name == "Max") return MergeOp::kMax;
  return errors::InvalidArgument("merge_op must be one of Add, Mul, Min, Max; got '", name, "'");
}

StatusOr<FinalOp> ParseFinalOp(const std::string& name) {
  if (name == "Id") return FinalOp::kId;
  if (name == "Div") return FinalOp::kDiv;
  return errors::InvalidArgument("final_op must be Id or Div; got '", name, "'");
}

bool IsCollectiveType(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kFloat64 || dtype == DType::kInt32 ||
         dtype == DType::kInt64;
}

void Merge(DType dtype, MergeOp op, void* out, const void* a, const void* b, int64_t n) {
  switch (dtype) {
    case DType::kFloat32:
      return MergeT(op, static_cast<float*>(out), static_cast<const float*>(a),
                    static_cast<const float*>(b), n);
    case DType::kFloat64:
      return MergeT(op, static_cast<double*>(out), static_cast<const double*>(a),
                    static_cast<const double*>(b), n);
    case DType::kInt32:
      return MergeT(op, static_cast<int32_t*>(out), static_cast<const int32_t*>(a),
                    static_cast<const int32_t*>(b), n);
    case DType::kInt64:
      return MergeT(op, static_cast<int64_t*>(out), static_cast<const int64_t*>(a),
                    static_cast<const int64_t*>(b), n);
    default:
      return;  // the op's attr admits no other dtype
  }
}

void Finalize(DType dtype, FinalOp op, void* out, int64_t n, int group_size) {
  if (op == FinalOp::kId || group_size == 1) return;
  switch (dtype) {
    case DType::kFloat32:
      return DivT(static_cast<float*>(out), n, group_size);
    case DType::kFloat64:
      return DivT(static_cast<double*>(out), n, group_size);
    case DType::kInt32:
      return DivT(static_cast<int32_t*>(out), n, group_size);
    case DType::kInt64:
      return DivT(static_cast<int64_t*>(out), n, group_size);
    default:
      return;
  }
}

}  // namespace tfd::kernels
