// Broadcasting comparisons (Greater ... NotEqual, bool output) and the
// logical connectives LogicalAnd / LogicalOr on bool tensors.
#include <type_traits>

#include "kernels/math/cwise_binary_kernel.h"
#include "kernels/math/math_ops_internal.h"

namespace tfd::kernels {
namespace {

struct CompareFn : NumericBinaryFn {
  static constexpr bool kBoolOutput = true;
};

// Equality is defined on bool too.
struct EqualityFn : CompareFn {
  template <typename T>
  static constexpr bool Supports() {
    return std::is_arithmetic_v<T>;
  }
};

struct GreaterFn : CompareFn {
  template <typename T>
  static auto Apply(const auto& a, const auto& b) { return a > b; }
};
struct GreaterEqualFn : CompareFn {
  template <typename T>
  static auto Apply(const auto& a, const auto& b) { return a >= b; }
};
struct LessFn : CompareFn {
  template <typename T>
  static auto Apply(const auto& a, const auto& b) { return a < b; }
};
struct LessEqualFn : CompareFn {
  template <typename T>
  static auto Apply(const auto& a, const auto& b) { return a <= b; }
};
struct EqualFn : EqualityFn {
  template <typename T>
  static auto Apply(const auto& a, const auto& b) { return a == b; }
};
struct NotEqualFn : EqualityFn {
  template <typename T>
  static auto Apply(const auto& a, const auto& b) { return a != b; }
};

struct LogicalFn : NumericBinaryFn {
  template <typename T>
  static constexpr bool Supports() {
    return std::is_same_v<T, bool>;
  }
};
struct LogicalAndFn : LogicalFn {
  template <typename T>
  static auto Apply(const auto& a, const auto& b) { return a && b; }
};
struct LogicalOrFn : LogicalFn {
  template <typename T>
  static auto Apply(const auto& a, const auto& b) { return a || b; }
};

template <typename Fn>
Status AddCompare(OpRegistry& r, const char* name, const char* types, const char* what) {
  return r.Add<BinaryOp<Fn>>(
      OpDefBuilder(name)
          .Input("x: T")
          .Input("y: T")
          .Output("z: bool")
          .Attr(types)
          .Doc(std::string("The truth of x ") + what +
               " y element-wise. Shape: the numpy broadcast of x and y."),
      shape_fns::BroadcastBinary);
}

template <typename Fn>
Status AddLogical(OpRegistry& r, const char* name, const char* what) {
  return r.Add<BinaryOp<Fn>>(OpDefBuilder(name)
                                 .Input("x: bool")
                                 .Input("y: bool")
                                 .Output("z: bool")
                                 .Doc(std::string("x ") + what +
                                      " y element-wise. Shape: the numpy broadcast of x and y."),
                             shape_fns::BroadcastBinary);
}

constexpr const char* kOrdered = "T: {float32, float64, int32, int64, uint8}";
constexpr const char* kEquatable = "T: {float32, float64, int32, int64, uint8, bool}";

}  // namespace

Status RegisterComparisonOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(AddCompare<GreaterFn>(r, "Greater", kOrdered, ">"));
  TFD_RETURN_IF_ERROR(AddCompare<GreaterEqualFn>(r, "GreaterEqual", kOrdered, ">="));
  TFD_RETURN_IF_ERROR(AddCompare<LessFn>(r, "Less", kOrdered, "<"));
  TFD_RETURN_IF_ERROR(AddCompare<LessEqualFn>(r, "LessEqual", kOrdered, "<="));
  TFD_RETURN_IF_ERROR(AddCompare<EqualFn>(r, "Equal", kEquatable, "=="));
  TFD_RETURN_IF_ERROR(AddCompare<NotEqualFn>(r, "NotEqual", kEquatable, "!="));
  TFD_RETURN_IF_ERROR(AddLogical<LogicalAndFn>(r, "LogicalAnd", "AND"));
  TFD_RETURN_IF_ERROR(AddLogical<LogicalOrFn>(r, "LogicalOr", "OR"));
  return OkStatus();
}

}  // namespace tfd::kernels
