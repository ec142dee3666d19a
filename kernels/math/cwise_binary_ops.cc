// Broadcasting arithmetic: Add, Sub, Mul, Div, Maximum, Minimum, Pow,
// SquaredDifference. Integer Div truncates toward zero (TensorFlow's Div on
// integers) and refuses a zero divisor instead of trapping.
#include <cmath>
#include <type_traits>

#include "kernels/math/cwise_binary_kernel.h"
#include "kernels/math/ieee_functors.h"
#include "kernels/math/math_ops_internal.h"

namespace tfd::kernels {
namespace {

struct AddFn : NumericBinaryFn {
  template <typename T>
  static auto Apply(const auto& a, const auto& b) { return a + b; }
};

struct SubFn : NumericBinaryFn {
  template <typename T>
  static auto Apply(const auto& a, const auto& b) { return a - b; }
};

struct MulFn : NumericBinaryFn {
  template <typename T>
  static auto Apply(const auto& a, const auto& b) { return a * b; }
};

// Truncating integer quotient. The one quotient that overflows, MIN / -1,
// traps on x86 like a zero divisor; it is computed as a wrapping negation.
template <typename T>
T TruncDiv(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(U{0} - static_cast<U>(a));
    }
  }
  return static_cast<T>(a / b);
}

struct DivFn : NumericBinaryFn {
  template <typename T>
  static Status Check(const Tensor&, const Tensor& y) {
    return CheckIntegerDivisor<T>(y);
  }
  template <typename T>
  static auto Apply(const auto& a, const auto& b) {
    if constexpr (std::is_integral_v<T>) {
      return a.binaryExpr(b, [](T u, T v) { return TruncDiv(u, v); });
    } else {
      return a / b;
    }
  }
};

// numpy's maximum and minimum: a NaN on either side is the result.
struct MaximumFn : NumericBinaryFn {
  template <typename T>
  static auto Apply(const auto& a, const auto& b) {
    if constexpr (std::is_floating_point_v<T>) {
      return a.binaryExpr(b, ieee::MaxOp<T>());
    } else {
      return a.max(b);
    }
  }
};

struct MinimumFn : NumericBinaryFn {
  template <typename T>
  static auto Apply(const auto& a, const auto& b) {
    if constexpr (std::is_floating_point_v<T>) {
      return a.binaryExpr(b, ieee::MinOp<T>());
    } else {
      return a.min(b);
    }
  }
};

// Exponentiation by squaring in unsigned arithmetic, so overflow wraps as
// TensorFlow's integer pow does instead of being undefined.
template <typename T>
T IntPow(T base, T exponent) {
  using U = std::make_unsigned_t<T>;
  U result = 1, b = static_cast<U>(base);
  for (T e = exponent; e > 0; e >>= 1) {
    if (e & 1) result = static_cast<U>(result * b);
    b = static_cast<U>(b * b);
  }
  return static_cast<T>(result);
}

struct PowFn : NumericBinaryFn {
  template <typename T>
  static constexpr bool Supports() {
    return kIsNumber<T> && !std::is_same_v<T, uint8_t>;
  }
  template <typename T>
  static Status Check(const Tensor&, const Tensor& y) {
    if constexpr (std::is_integral_v<T>) {
      const T* e = y.data<T>();
      for (int64_t i = 0; i < y.num_elements(); ++i) {
        if (e[i] < 0) {
          return errors::InvalidArgument(
              "Integers to negative integer powers are not allowed: exponent y has ", e[i],
              " at flat index ", i);
        }
      }
    }
    return OkStatus();
  }
  template <typename T>
  static auto Apply(const auto& a, const auto& b) {
    if constexpr (std::is_integral_v<T>) {
      return a.binaryExpr(b, [](T u, T v) { return IntPow(u, v); });
    } else {
      return a.binaryExpr(b, [](T u, T v) { return static_cast<T>(std::pow(u, v)); });
    }
  }
};

struct SquaredDifferenceFn : NumericBinaryFn {
  template <typename T>
  static constexpr bool Supports() {
    return kIsNumber<T> && !std::is_same_v<T, uint8_t>;
  }
  template <typename T>
  static auto Apply(const auto& a, const auto& b) { return (a - b).square(); }
};

constexpr const char* kAllNumbers = "T: {float32, float64, int32, int64, uint8}";
constexpr const char* kSignedNumbers = "T: {float32, float64, int32, int64}";

template <typename Fn>
Status AddBinary(OpRegistry& r, const char* name, const char* types, const std::string& doc) {
  return r.Add<BinaryOp<Fn>>(OpDefBuilder(name)
                                 .Input("x: T")
                                 .Input("y: T")
                                 .Output("z: T")
                                 .Attr(types)
                                 .Doc(doc + " Shape: the numpy broadcast of x and y."),
                             shape_fns::BroadcastBinary);
}

}  // namespace

Status RegisterBinaryOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(AddBinary<AddFn>(r, "Add", kAllNumbers, "x + y element-wise."));
  TFD_RETURN_IF_ERROR(AddBinary<SubFn>(r, "Sub", kAllNumbers, "x - y element-wise."));
  TFD_RETURN_IF_ERROR(AddBinary<MulFn>(r, "Mul", kAllNumbers, "x * y element-wise."));
  TFD_RETURN_IF_ERROR(AddBinary<DivFn>(
      r, "Div", kAllNumbers,
      "x / y element-wise; integer division truncates toward zero and a zero divisor is "
      "INVALID_ARGUMENT."));
  TFD_RETURN_IF_ERROR(AddBinary<MaximumFn>(
      r, "Maximum", kAllNumbers,
      "The larger of x and y element-wise; NaN where either is NaN (as numpy.maximum)."));
  TFD_RETURN_IF_ERROR(AddBinary<MinimumFn>(
      r, "Minimum", kAllNumbers,
      "The smaller of x and y element-wise; NaN where either is NaN (as numpy.minimum)."));
  TFD_RETURN_IF_ERROR(AddBinary<PowFn>(
      r, "Pow", kSignedNumbers,
      "x raised to the power y element-wise; for integers a negative exponent is "
      "INVALID_ARGUMENT and overflow wraps."));
  TFD_RETURN_IF_ERROR(AddBinary<SquaredDifferenceFn>(r, "SquaredDifference", kSignedNumbers,
                                                     "(x - y)^2 element-wise."));
  return OkStatus();
}

}  // namespace tfd::kernels
