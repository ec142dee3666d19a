// Every element-wise float op of the registry at the IEEE edges, against a
// reference computed with <cmath> in long double (rounded to the op's dtype)
// or, for the IEEE operations themselves (+ - * / sqrt) and ops defined by a
// formula of them, in the dtype, where IEEE fixes the answer to the bit. The
// reference follows numpy: maximum and minimum propagate NaN, log(0) = -inf,
// log(-1) = NaN, sqrt(-0) = -0, sign(NaN) = NaN.
//
// Each unary op sees every edge value at every position of tensors of 1 to
// kMaxLength elements; each binary op sees every edge value at every position
// on both sides, every pair of edge values at every position of the longest
// tensor, and every pair with a scalar on either side.
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/kernels/numerics/edge_sweep.h"
#include "tests/util/kernel_runner.h"

namespace tfd {
namespace {

using namespace edge_sweep;  // NOLINT: test helpers
using W = long double;

// Ulps allowed where the reference is finite: none for what IEEE rounds
// correctly; 1 for libm's functions, 2 for Eigen's vectorised log and for
// 1 / sqrt (two roundings); 4 for the float32 tanh built on Eigen's expm1
// (checked for every float32); Eigen's exp's error, plus the roundings of
// the arithmetic around it.
constexpr Tolerance kExact{0}, kLibm{1}, kOneFn{2}, kTanh{4}, kExp{kExpUlps},
    kAfterExp{kExpUlps + 2};
constexpr Tolerance kEitherZero{0, true};

// Selu's constants, as TensorFlow's kernel has them.
constexpr W kSeluScale = 1.0507009873554804934193349852946L;
constexpr W kSeluScaleAlpha = 1.7580993408473768599402175208123L;

// Halves to the even neighbour, by definition rather than by rint.
template <typename T>
T RoundHalfEven(T x) {
  if (!std::isfinite(x)) return x;
  const W lo = std::floor(W(x)), frac = W(x) - lo;
  W r = frac > 0.5L ? lo + 1 : frac < 0.5L ? lo : (std::fmod(lo, 2.0L) == 0 ? lo : lo + 1);
  return std::copysign(Round<T>(r), x);  // -0.4 rounds to -0
}

// Python's and numpy's a % b: the sign of b; a zero remainder is a zero of
// b's sign; a % inf is a where a has inf's sign (or is zero), else inf.
template <typename T>
T NumpyRemainder(T a, T b) {
  if (std::isnan(a) || std::isnan(b) || std::isinf(a) || b == 0) return std::nan("");
  if (std::isinf(b)) {
    if (a == 0) return std::copysign(T(0), b);
    return std::signbit(a) == std::signbit(b) ? a : b;
  }
  const W r = std::fmod(W(a), W(b));  // exact
  if (r == 0) return std::copysign(T(0), b);
  return std::signbit(r) != std::signbit(b) ? Round<T>(r + b) : Round<T>(r);
}

// Python's and numpy's a // b: floor of the exact quotient; a / b for b = 0;
// NaN for an infinite a; for an infinite b, 0 (signed as a / b) when a has
// b's sign or is zero, else -1.
template <typename T>
T NumpyFloorDivide(T a, T b) {
  if (b == 0) return a / b;
  if (std::isnan(a) || std::isnan(b) || std::isinf(a)) return std::nan("");
  if (std::isinf(b)) {
    return a == 0 || std::signbit(a) == std::signbit(b) ? a / b : T(-1);
  }
  const T q = Round<T>(std::floor(W(a) / W(b)));
  return q == 0 ? std::copysign(T(0), a / b) : q;
}

template <typename TIn, typename TOut>
struct UnaryCase {
  std::string op;
  std::function<TOut(TIn)> ref;
  Tolerance tol;
  AttrMap attrs;  // {"T": dtype} when empty
};

template <typename TIn, typename TOut>
void SweepUnary(const UnaryCase<TIn, TOut>& c) {
  const DType d = DTypeOf<TIn>::value;
  AttrMap attrs = c.attrs.empty() ? AttrMap{{"T", d}} : c.attrs;
  auto kernel = testing::KernelRunner::Make(Registry(), c.op, attrs);
  {
    INFO(c.op << " " << DTypeName(d) << ": " << kernel.status().ToString());
    REQUIRE(kernel.ok());
  }
  const std::vector<TIn> edges = EdgeValues<TIn>();
  const int64_t e = static_cast<int64_t>(edges.size());
  Mismatches m(c.op, d);
  for (int64_t n = 1; n <= kMaxLength; ++n) {
    for (int64_t k = 0; k < e; ++k) {
      std::vector<TIn> x(n);
      for (int64_t p = 0; p < n; ++p) x[p] = edges[(p + k) % e];
      auto out = (*kernel)->Run({Value{Tensor::FromVector(x), nullptr}});
      if (!out.ok()) {
        m.Fail(out.status().ToString());
        continue;
      }
      const TOut* y = (*out)[0].tensor.template data<TOut>();
      for (int64_t p = 0; p < n; ++p) {
        m.Check(y[p], c.ref(x[p]), c.tol, n, p, [&] { return "(" + Show(x[p]) + ")"; });
      }
    }
  }
  m.Report();
}

template <typename T>
std::vector<UnaryCase<T, T>> UnaryCases() {
  return {
      {"Neg", [](T x) { return -x; }, kExact, {}},
      {"Abs", [](T x) { return std::fabs(x); }, kExact, {}},
      {"Square", [](T x) { return x * x; }, kExact, {}},
      {"Sqrt", [](T x) { return std::sqrt(x); }, kExact, {}},
      {"Rsqrt", [](T x) { return Round<T>(1 / std::sqrt(W(x))); }, kOneFn, {}},
      {"Reciprocal", [](T x) { return T(1) / x; }, kExact, {}},
      {"Exp", [](T x) { return Round<T>(std::exp(W(x))); }, kExp, {}},
      {"Log", [](T x) { return Round<T>(std::log(W(x))); }, kOneFn, {}},
      {"Tanh", [](T x) { return Round<T>(std::tanh(W(x))); }, kTanh, {}},
      {"Sign", [](T x) { return x > 0 ? T(1) : x < 0 ? T(-1) : x == 0 ? T(0) : x; }, kExact, {}},
      {"Floor", [](T x) { return std::floor(x); }, kExact, {}},
      {"Sigmoid",
       [](T x) {
         const W e = std::exp(-std::fabs(W(x)));  // never overflows
         return Round<T>(x < 0 ? e / (1 + e) : 1 / (1 + e));
       },
       kAfterExp, {}},
      {"Softplus",
       [](T x) {
         const W w = x;
         return Round<T>((w > 0 ? w : 0) + std::log1p(std::exp(-std::fabs(w))));
       },
       kOneFn, {}},
      {"Elu", [](T x) { return x < 0 ? Round<T>(std::expm1(W(x))) : x; }, kLibm, {}},
      // numpy.maximum(x, 0): NaN stays NaN; -0 or +0 for -0.
      {"Relu", [](T x) { return std::isnan(x) || x > 0 ? x : T(0); }, kEitherZero, {}},
      {"Relu6",
       [](T x) { return std::isnan(x) ? x : x > 6 ? T(6) : x > 0 ? x : T(0); }, kEitherZero, {}},
      {"Ceil", [](T x) { return std::ceil(x); }, kExact, {}},
      {"Round", [](T x) { return RoundHalfEven(x); }, kExact, {}},
      {"Erf", [](T x) { return Round<T>(std::erf(W(x))); }, kOneFn, {}},
      {"Sin", [](T x) { return Round<T>(std::sin(W(x))); }, kOneFn, {}},
      {"Cos", [](T x) { return Round<T>(std::cos(W(x))); }, kOneFn, {}},
      {"Tan", [](T x) { return Round<T>(std::tan(W(x))); }, kOneFn, {}},
      {"Asin", [](T x) { return Round<T>(std::asin(W(x))); }, kOneFn, {}},
      {"Acos", [](T x) { return Round<T>(std::acos(W(x))); }, kOneFn, {}},
      {"Atan", [](T x) { return Round<T>(std::atan(W(x))); }, kOneFn, {}},
      {"Sinh", [](T x) { return Round<T>(std::sinh(W(x))); }, kOneFn, {}},
      {"Cosh", [](T x) { return Round<T>(std::cosh(W(x))); }, kOneFn, {}},
      {"Asinh", [](T x) { return Round<T>(std::asinh(W(x))); }, kOneFn, {}},
      {"Acosh", [](T x) { return Round<T>(std::acosh(W(x))); }, kOneFn, {}},
      {"Atanh", [](T x) { return Round<T>(std::atanh(W(x))); }, kOneFn, {}},
      // alpha = 0.2 (the default) as the dtype holds it, as TensorFlow casts it.
      {"LeakyRelu", [](T x) { return x > 0 ? x : x * T(0.2); }, kExact, {}},
      {"Selu",
       [](T x) {
         return x < 0 ? Round<T>(kSeluScaleAlpha * std::expm1(W(x))) : Round<T>(kSeluScale * x);
       },
       kOneFn, {}},
  };
}

// Whether each float is inf, NaN, finite: bool outputs, exact.
template <typename T>
std::vector<UnaryCase<T, bool>> ClassifyCases() {
  return {
      {"IsInf", [](T x) { return std::isinf(x); }, kExact, {}},
      {"IsNan", [](T x) { return std::isnan(x); }, kExact, {}},
      {"IsFinite", [](T x) { return std::isfinite(x); }, kExact, {}},
  };
}

TEST_CASE("unary float ops give the reference at every edge and vector position") {
  for (const auto& c : UnaryCases<float>()) SweepUnary(c);
  for (const auto& c : UnaryCases<double>()) SweepUnary(c);
}

TEST_CASE("IsInf, IsNan and IsFinite classify every edge value") {
  for (const auto& c : ClassifyCases<float>()) SweepUnary(c);
  for (const auto& c : ClassifyCases<double>()) SweepUnary(c);
}

TEST_CASE("Cast between float32 and float64 rounds once and keeps the specials") {
  SweepUnary(UnaryCase<float, double>{
      "Cast", [](float x) { return double(x); }, kExact,
      {{"SrcT", DType::kFloat32}, {"DstT", DType::kFloat64}}});
  SweepUnary(UnaryCase<double, float>{
      "Cast", [](double x) { return float(x); }, kExact,
      {{"SrcT", DType::kFloat64}, {"DstT", DType::kFloat32}}});
}

template <typename T, typename TOut>
struct BinaryCase {
  std::string op;
  std::function<TOut(T, T)> ref;
  Tolerance tol;
  bool broadcasts = false;  // also with a scalar x or y
  AttrMap attrs = {};       // besides {"T": dtype}
  bool bias_add = false;    // x is [1, n], y is [n]
};

// How x and y are laid out: same shapes, or a scalar on one side.
enum class Layout { kSameShape, kScalarX, kScalarY };

// The edge indices of element p of x and y in run k of a tensor of n
// elements. At n = kMaxLength, as k runs over e * e values, every element
// sees every pair of edges (the last ones in the scalar tail); shorter
// tensors get e runs with x and y rotated in opposite directions, so every
// edge still reaches every position on both sides. A scalar takes every edge
// while the other side is rotated through every position.
struct EdgeIndex {
  int64_t x, y;
};
EdgeIndex PairAt(Layout layout, int64_t n, int64_t p, int64_t k, int64_t e) {
  const int64_t rotated = (p + k) % e;
  if (layout == Layout::kScalarX) return {k / e, rotated};
  if (layout == Layout::kScalarY) return {rotated, k / e};
  if (n == kMaxLength) return {rotated, ((p + k) / e) % e};
  return {rotated, ((k - p) % e + e) % e};
}

template <typename T, typename TOut>
void SweepBinaryLayout(const BinaryCase<T, TOut>& c, testing::KernelRunner& kernel, Layout layout,
                       Mismatches& m) {
  const std::vector<T> edges = EdgeValues<T>();
  const int64_t e = static_cast<int64_t>(edges.size());
  // A scalar on one side: the longest tensor covers packets and the tail.
  const int64_t first_n = layout == Layout::kSameShape ? 1 : kMaxLength;
  for (int64_t n = first_n; n <= kMaxLength; ++n) {
    const int64_t runs = n == kMaxLength ? e * e : e;
    for (int64_t k = 0; k < runs; ++k) {
      std::vector<T> x(n), y(n);
      for (int64_t p = 0; p < n; ++p) {
        const EdgeIndex i = PairAt(layout, n, p, k, e);
        x[p] = edges[i.x];
        y[p] = edges[i.y];
      }
      const std::vector<int64_t> n_dims = c.bias_add ? std::vector<int64_t>{1, n}
                                                     : std::vector<int64_t>{n};
      Tensor tx = layout == Layout::kScalarX ? Tensor::Scalar(x[0])
                                             : Tensor::FromVector(x, TensorShape(n_dims));
      Tensor ty = layout == Layout::kScalarY ? Tensor::Scalar(y[0]) : Tensor::FromVector(y);
      std::vector<Value> inputs = {Value{tx, nullptr}, Value{ty, nullptr}};
      auto out = kernel.Run(std::move(inputs));
      if (!out.ok()) {
        m.Fail(out.status().ToString());
        continue;
      }
      const TOut* z = (*out)[0].tensor.template data<TOut>();
      for (int64_t p = 0; p < n; ++p) {
        m.Check(z[p], c.ref(x[p], y[p]), c.tol, n, p,
                [&] { return "(" + Show(x[p]) + ", " + Show(y[p]) + ")"; });
      }
    }
  }
}

template <typename T, typename TOut>
void SweepBinary(const BinaryCase<T, TOut>& c) {
  const DType d = DTypeOf<T>::value;
  AttrMap attrs = c.attrs;
  attrs["T"] = d;
  auto kernel = testing::KernelRunner::Make(Registry(), c.op, attrs);
  {
    INFO(c.op << " " << DTypeName(d) << ": " << kernel.status().ToString());
    REQUIRE(kernel.ok());
  }
  Mismatches m(c.op, d);
  SweepBinaryLayout(c, **kernel, Layout::kSameShape, m);
  if (c.broadcasts) {
    SweepBinaryLayout(c, **kernel, Layout::kScalarX, m);
    SweepBinaryLayout(c, **kernel, Layout::kScalarY, m);
  }
  m.Report();
}

template <typename T>
std::vector<BinaryCase<T, T>> ArithmeticCases() {
  return {
      {"Add", [](T a, T b) { return a + b; }, kExact, true},
      {"Sub", [](T a, T b) { return a - b; }, kExact, true},
      {"Mul", [](T a, T b) { return a * b; }, kExact, true},
      {"Div", [](T a, T b) { return a / b; }, kExact, true},
      {"SquaredDifference", [](T a, T b) { return (a - b) * (a - b); }, kExact, true},
      // numpy.maximum / numpy.minimum: NaN from either side; of two zeros either.
      {"Maximum", [](T a, T b) { return a >= b || std::isnan(a) ? a : b; }, kEitherZero, true},
      {"Minimum", [](T a, T b) { return a <= b || std::isnan(a) ? a : b; }, kEitherZero, true},
      {"Pow", [](T a, T b) { return Round<T>(std::pow(W(a), W(b))); }, kLibm, true},
      {"Mod", [](T a, T b) { return Round<T>(std::fmod(W(a), W(b))); }, kExact, true},
      {"FloorMod", [](T a, T b) { return NumpyRemainder(a, b); }, kLibm, true},
      {"FloorDiv", [](T a, T b) { return NumpyFloorDivide(a, b); }, kLibm, true},
      {"AddN", [](T a, T b) { return a + b; }, kExact, false, {{"N", int64_t{2}}}},
      {"BiasAdd", [](T a, T b) { return a + b; }, kExact, false, {}, true},
  };
}

// The gradient ops are defined by their formulas (docs/ops.md), evaluated in
// the dtype as written, as numpy would evaluate them.
template <typename T>
std::vector<BinaryCase<T, T>> GradientCases() {
  return {
      {"SqrtGrad", [](T y, T dy) { return dy * T(0.5) / y; }, kExact},
      {"RsqrtGrad", [](T y, T dy) { return dy * T(-0.5) * (y * y * y); }, kExact},
      {"ReciprocalGrad", [](T y, T dy) { return -dy * (y * y); }, kExact},
      {"SigmoidGrad", [](T y, T dy) { return dy * y * (T(1) - y); }, kExact},
      {"TanhGrad", [](T y, T dy) { return dy * (T(1) - y * y); }, kExact},
      {"ReluGrad", [](T g, T x) { return x > 0 ? g : T(0); }, kExact},
      {"Relu6Grad", [](T g, T x) { return x > 0 && x < 6 ? g : T(0); }, kExact},
      {"EluGrad", [](T g, T y) { return y < 0 ? g * (y + T(1)) : g; }, kExact},
      {"SoftplusGrad", [](T g, T x) { return g / (T(1) + std::exp(-x)); }, kAfterExp},
      {"LeakyReluGrad", [](T g, T x) { return x > 0 ? g : g * T(0.2); }, kExact},
      {"SeluGrad",
       [](T g, T y) { return y < 0 ? g * (y + T(kSeluScaleAlpha)) : g * T(kSeluScale); }, kExact},
  };
}

template <typename T>
std::vector<BinaryCase<T, bool>> ComparisonCases() {
  return {
      {"Equal", [](T a, T b) { return a == b; }, kExact, true},
      {"NotEqual", [](T a, T b) { return a != b; }, kExact, true},
      {"Less", [](T a, T b) { return a < b; }, kExact, true},
      {"LessEqual", [](T a, T b) { return a <= b; }, kExact, true},
      {"Greater", [](T a, T b) { return a > b; }, kExact, true},
      {"GreaterEqual", [](T a, T b) { return a >= b; }, kExact, true},
  };
}

TEST_CASE("binary float arithmetic gives the reference for every pair of edges") {
  for (const auto& c : ArithmeticCases<float>()) SweepBinary(c);
  for (const auto& c : ArithmeticCases<double>()) SweepBinary(c);
}

TEST_CASE("float gradient ops follow their formulas at every pair of edges") {
  for (const auto& c : GradientCases<float>()) SweepBinary(c);
  for (const auto& c : GradientCases<double>()) SweepBinary(c);
}

TEST_CASE("float comparisons are false with NaN, except NotEqual") {
  for (const auto& c : ComparisonCases<float>()) SweepBinary(c);
  for (const auto& c : ComparisonCases<double>()) SweepBinary(c);
}

}  // namespace
}  // namespace tfd
