// Remainders and floored quotients: Mod (truncating, C's % and fmod),
// FloorMod and FloorDiv (Python's and numpy's % and //: the remainder takes
// the divisor's sign, the quotient rounds toward -inf). An integer divisor of
// zero is INVALID_ARGUMENT, as TensorFlow's; MIN / -1, which traps on x86,
// wraps to MIN with remainder 0.
//
// Floats follow numpy's npy_divmod to the bit: x // 0 is x / 0 (inf or
// NaN), x % 0 is NaN, -1 // inf is -1 and -1 % inf is inf, a zero remainder
// takes the divisor's sign, and the quotient is snapped to the integer
// nearest (x - x % y) / y so that x // y * y + x % y == x holds as closely as
// floats allow.
#include <cmath>
#include <tuple>
#include <vector>
#include <type_traits>

#include "kernels/math/cwise_binary_kernel.h"
#include "kernels/math/grad_util.h"
#include "kernels/math/math_ops_internal.h"

namespace tfd::kernels {
namespace {

// Signed integers, float32 and float64: TensorFlow's common set of the three.
struct SignedBinaryFn : NumericBinaryFn {
  template <typename T>
  static constexpr bool Supports() {
    return kIsNumber<T> && std::is_signed_v<T>;
  }
  template <typename T>
  static Status Check(const Tensor&, const Tensor& y) {
    return CheckIntegerDivisor<T>(y);
  }
};

// a % b truncated, for b != 0; b == -1 gives 0 where MIN % -1 would trap.
template <typename T>
T IntTruncMod(T a, T b) {
  return b == -1 ? T(0) : static_cast<T>(a % b);
}

template <typename T>
T IntFloorMod(T a, T b) {
  const T r = IntTruncMod(a, b);
  return r != 0 && ((r < 0) != (b < 0)) ? static_cast<T>(r + b) : r;
}

template <typename T>
T IntFloorDiv(T a, T b) {
  if (b == -1) {  // the wrapping negation; MIN / -1 overflows
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(U{0} - static_cast<U>(a));
  }
  const T q = static_cast<T>(a / b);
  return a % b != 0 && ((a < 0) != (b < 0)) ? static_cast<T>(q - 1) : q;
}

// numpy's npy_divmod for b != 0 (not NaN): the floored quotient, and the
// remainder in *mod.
template <typename T>
T FloatDivMod(T a, T b, T* mod) {
  T m = std::fmod(a, b);
  T div = (a - m) / b;
  if (m != 0) {
    if ((b < 0) != (m < 0)) {
      m += b;
      div -= T(1);
    }
  } else {
    m = std::copysign(T(0), b);
  }
  T floor_div;
  if (div != 0) {
    floor_div = std::floor(div);
    if (div - floor_div > T(0.5)) floor_div += T(1);
  } else {
    floor_div = std::copysign(T(0), a / b);
  }
  *mod = m;
  return floor_div;
}

template <typename T>
T FloatFloorMod(T a, T b) {
  if (b == 0) return std::fmod(a, b);  // NaN
  T mod;
  FloatDivMod(a, b, &mod);
  return mod;
}

template <typename T>
T FloatFloorDiv(T a, T b) {
  if (b == 0) return a / b;
  T mod;
  return FloatDivMod(a, b, &mod);
}

struct ModFn : SignedBinaryFn {
  template <typename T>
  static auto Apply(const auto& a, const auto& b) {
    if constexpr (std::is_integral_v<T>) {
      return a.binaryExpr(b, [](T u, T v) { return IntTruncMod(u, v); });
    } else {
      return a.binaryExpr(b, [](T u, T v) { return std::fmod(u, v); });
    }
  }
};

struct FloorModFn : SignedBinaryFn {
  template <typename T>
  static auto Apply(const auto& a, const auto& b) {
    if constexpr (std::is_integral_v<T>) {
      return a.binaryExpr(b, [](T u, T v) { return IntFloorMod(u, v); });
    } else {
      return a.binaryExpr(b, [](T u, T v) { return FloatFloorMod(u, v); });
    }
  }
};

struct FloorDivFn : SignedBinaryFn {
  template <typename T>
  static auto Apply(const auto& a, const auto& b) {
    if constexpr (std::is_integral_v<T>) {
      return a.binaryExpr(b, [](T u, T v) { return IntFloorDiv(u, v); });
    } else {
      return a.binaryExpr(b, [](T u, T v) { return FloatFloorDiv(u, v); });
    }
  }
};

template <typename Fn>
Status AddModOp(OpRegistry& r, const char* name, const std::string& doc) {
  return r.Add<BinaryOp<Fn>>(
      OpDefBuilder(name)
          .Input("x: T")
          .Input("y: T")
          .Output("z: T")
          .Attr("T: {float32, float64, int32, int64}")
          .Doc(doc + " An integer y of 0 is INVALID_ARGUMENT. Shape: the numpy broadcast of x "
                     "and y."),
      shape_fns::BroadcastBinary);
}

// x = FloorDiv(x, y) * y + FloorMod(x, y), FloorDiv piecewise constant:
// d/dx = 1, d/dy = -FloorDiv(x, y) (TensorFlow's _FloorModGrad).
Status FloorModGrad(Scope& s, const GradInputs& in, std::vector<Output>* dx) {
  const Output &x = in.inputs[0], &y = in.inputs[1], &dz = in.dy[0];
  const Output gy = grad::Mul(s, dz, grad::Neg(s, grad::Op(s, "FloorDiv", {x, y})));
  std::tie((*dx)[0], (*dx)[1]) = grad::SumBroadcast(s, x, y, dz, gy);
  return OkStatus();
}

}  // namespace

Status RegisterModOps(OpRegistry& r) {
  TFD_RETURN_IF_ERROR(AddModOp<ModFn>(
      r, "Mod",
      "The remainder of x / y truncated toward zero, element-wise (C's % and fmod): it has "
      "x's sign, so Mod(-7, 3) = -1."));
  TFD_RETURN_IF_ERROR(AddModOp<FloorModFn>(
      r, "FloorMod",
      "The remainder of the floored division x // y, element-wise (Python's and numpy's %): "
      "it has y's sign, so FloorMod(-7, 3) = 2; for floats x % 0 is NaN and -1 % inf is inf."));
  TFD_RETURN_IF_ERROR(AddModOp<FloorDivFn>(
      r, "FloorDiv",
      "x / y rounded toward negative infinity, element-wise (Python's and numpy's //): "
      "FloorDiv(-7, 2) = -4, and for integers FloorDiv(x, y) * y + FloorMod(x, y) = x; for "
      "floats x // 0 is x / 0."));
  // Mod has no gradient, as in TensorFlow; FloorDiv's is none (zero almost
  // everywhere).
  TFD_RETURN_IF_ERROR(grad::Register(r, "FloorMod", FloorModGrad));
  return grad::Register(r, "FloorDiv", [](Scope&, const GradInputs&, std::vector<Output>*) {
    return OkStatus();
  });
}

}  // namespace tfd::kernels
