// Eigen functors for the element-wise math whose stock Eigen form is not
// IEEE, vectorised wherever Eigen's packet code can be made right. Any
// family may use them:
//
//   y = x.unaryExpr(ieee::ExpOp<T>());          // not x.exp()
//   z = a.binaryExpr(b, ieee::MaxOp<T>());      // not a.max(b)
//
// What is wrong with the stock forms (Eigen 3.4, with EIGEN_FAST_MATH=0,
// which the top-level meson.build sets for every file):
// - exp() clamps its argument: results that should be denormal come out 0,
//   results near the overflow threshold inf, and float64 exp(-inf) is 5.6e-309;
// - log() raises denormal arguments to the smallest normal number
//   (float32 log(1e-40) = -87.34, not -92.10);
// - sqrt() and rsqrt() have no packet form with AVX-512 unless
//   EIGEN_FAST_MATH, whose packet form is an approximation (sqrt(inf) = NaN,
//   sqrt(denormal) = 0, sqrt(2) one ulp off), and tanh() none but
//   EIGEN_FAST_MATH's rational approximation;
// - max(), min(), maxCoeff() and minCoeff() drop a NaN or keep it depending
//   on its side and its vector lane, where numpy propagates it;
// - unary minus in packets (AVX, AVX-512) is 0 - x: +0 for +0, not -0.
// tests/kernels/numerics sweeps every kernel at the IEEE edges.
//
// Thread-safety: stateless functors.
#pragma once

#include <cmath>
#include <limits>
#include <type_traits>

#include <Eigen/Core>

// Eigen's fast-math forms are approximations; psqrt, which SqrtOp calls, is
// the exact instruction only without them.
static_assert(EIGEN_FAST_MATH == 0, "tfd kernels must be built with EIGEN_FAST_MATH=0");

namespace tfd::kernels::ieee {

namespace internal {

// y with f(x) in the lanes where x is not in_range(x): the few lanes the
// packet form gets wrong, which f (the functor's scalar form) gets right.
// Out of line and rarely taken, so that the common path keeps its constants
// in registers.
template <typename Packet, typename InRange, typename F>
[[gnu::noinline, gnu::cold]] Packet FixLanes(Packet x, Packet y, InRange in_range, F f) {
  namespace ei = Eigen::internal;
  using T = typename ei::unpacket_traits<Packet>::type;
  constexpr int kLanes = ei::unpacket_traits<Packet>::size;
  T xs[kLanes], ys[kLanes];
  ei::pstoreu(xs, x);
  ei::pstoreu(ys, y);
  for (int i = 0; i < kLanes; ++i) {
    if (!in_range(xs[i])) ys[i] = f(xs[i]);
  }
  return ei::ploadu<Packet>(ys);
}

}  // namespace internal

// e^x. Eigen's packet exp is within 4 ulps (float32: checked for every
// float; float64 within 2 on samples) while its result is a normal number
// and it does not overflow early; other arguments (a result that is
// denormal, 0 or inf; NaN) are libm's.
template <typename T>
struct ExpOp {
  static_assert(std::is_floating_point_v<T>);
  // Results turn denormal below -87.34 (float) and -708.40 (double); Eigen
  // overflows past 88.37 and 709.43.
  static constexpr T kBound = std::is_same_v<T, float> ? T(87) : T(708);

  T operator()(const T& x) const { return std::exp(x); }
  template <typename Packet>
  Packet packetOp(const Packet& x) const {
    namespace ei = Eigen::internal;
    const Packet y = ei::pexp(x);
    const Packet outside = ei::pcmp_lt_or_nan(ei::pset1<Packet>(kBound), ei::pabs(x));
    if (ei::predux_any(outside)) [[unlikely]] {
      return internal::FixLanes(x, y, [](T v) { return std::fabs(v) <= kBound; }, ExpOp());
    }
    return y;
  }
};

// The natural logarithm. Eigen's packet log is within an ulp but raises a
// denormal to the smallest normal number: a denormal is scaled into the
// normal range first (by 2^24 or 2^54, exact) and the scale's log taken
// off after, within an ulp too (checked for every float32 denormal).
// Zeros, negatives, inf and NaN pass through the scaling unchanged in kind.
template <typename T>
struct LogOp {
  static_assert(std::is_floating_point_v<T>);
  static constexpr bool kFloat = std::is_same_v<T, float>;
  static constexpr T kScale = kFloat ? T(0x1p24) : T(0x1p54);
  static constexpr T kLogScale = T((kFloat ? 24 : 54) * 0.693147180559945309417232121458L);

  T operator()(const T& x) const { return std::log(x); }
  template <typename Packet>
  Packet packetOp(const Packet& x) const {
    namespace ei = Eigen::internal;
    const Packet small = ei::pcmp_lt(x, ei::pset1<Packet>(std::numeric_limits<T>::min()));
    const Packet scaled = ei::pselect(small, ei::pmul(x, ei::pset1<Packet>(kScale)), x);
    return ei::psub(ei::plog(scaled), ei::pand(small, ei::pset1<Packet>(kLogScale)));
  }
};

// The correctly rounded square root: the processor's instruction, in
// packets (Eigen's psqrt is that instruction without EIGEN_FAST_MATH).
template <typename T>
struct SqrtOp {
  T operator()(const T& x) const { return std::sqrt(x); }
  template <typename Packet>
  Packet packetOp(const Packet& x) const {
    return Eigen::internal::psqrt(x);
  }
};

// 1 / sqrt(x), both correctly rounded (so rsqrt(-0) = -inf, rsqrt(inf) = 0).
template <typename T>
struct RsqrtOp {
  T operator()(const T& x) const { return T(1) / std::sqrt(x); }
  template <typename Packet>
  Packet packetOp(const Packet& x) const {
    namespace ei = Eigen::internal;
    return ei::pdiv(ei::pset1<Packet>(T(1)), ei::psqrt(x));
  }
};

// tanh. float32 in packets: tanh|x| = -m / (m + 2) with m = expm1(-2|x|),
// Eigen's (which never overflows here), and x itself below 2^-12, where
// tanh(x) rounds to x; then x's sign. Within 4 ulps and of the right class
// for every float32 (checked). float64: libm's, element by element, as
// before (Eigen has no packet tanh for it).
template <typename T>
struct TanhOp {
  T operator()(const T& x) const { return std::tanh(x); }
  template <typename Packet>
  Packet packetOp(const Packet& x) const {
    namespace ei = Eigen::internal;
    const Packet ax = ei::pabs(x);
    const Packet m = ei::pexpm1(ei::pmul(ax, ei::pset1<Packet>(T(-2))));
    Packet t = ei::pdiv(ei::pnegate(m), ei::padd(m, ei::pset1<Packet>(T(2))));
    t = ei::pselect(ei::pcmp_lt(ax, ei::pset1<Packet>(T(0x1p-12))), ax, t);
    return ei::por(t, ei::pand(x, ei::pset1<Packet>(T(-0.0))));  // t >= 0 or NaN
  }
};

// The logistic function 1 / (1 + e^-x). For x below -ExpOp::kBound that
// formula gives 0 where the result is denormal (e^-x overflows), so there
// it is e^x / (1 + e^x), whose exponent is never positive: libm's exp,
// lane by lane, as for NaN.
template <typename T>
struct SigmoidOp {
  static constexpr T kLow = -ExpOp<T>::kBound;

  T operator()(const T& x) const {
    const T e = std::exp(-std::fabs(x));
    const T r = T(1) / (T(1) + e);
    return x < T(0) ? e * r : r;
  }
  template <typename Packet>
  Packet packetOp(const Packet& x) const {
    namespace ei = Eigen::internal;
    const Packet one = ei::pset1<Packet>(T(1));
    // From kLow up, e^-x is Eigen's accurate exp, or for large x a number
    // (however wrong) too small to change 1 + e^-x.
    const Packet y = ei::pdiv(one, ei::padd(one, ei::pexp(ei::pnegate(x))));
    const Packet low = ei::pcmp_lt_or_nan(x, ei::pset1<Packet>(kLow));
    if (ei::predux_any(low)) [[unlikely]] {
      return internal::FixLanes(x, y, [](T v) { return v >= kLow; }, SigmoidOp());
    }
    return y;
  }
};

// -x. Eigen's packet negation is 0 - x, which gives +0 for +0, not -0.
template <typename T>
struct NegOp {
  T operator()(const T& x) const { return -x; }
  template <typename Packet>
  Packet packetOp(const Packet& x) const {
    namespace ei = Eigen::internal;
    if constexpr (std::is_floating_point_v<T>) {
      return ei::pxor(x, ei::pset1<Packet>(T(-0.0)));  // flips the sign bit only
    } else {
      return ei::pnegate(x);
    }
  }
};

// numpy's maximum and minimum: NaN if either side is NaN. Eigen's pmax(a,
// b) and pmin(a, b) return a when either is NaN (its x86 forms put a where
// the instruction returns the NaN case; NEON's propagate both); b's NaN is
// selected back in. Three operations where Eigen's PropagateNaN takes six.
// Also the reducers of maxCoeff/minCoeff-like reductions (a.redux(op)).
template <typename T>
struct MaxOp : Eigen::internal::scalar_max_op<T, T, Eigen::PropagateNaN> {
  template <typename Packet>
  Packet packetOp(const Packet& a, const Packet& b) const {
    namespace ei = Eigen::internal;
    return ei::pselect(ei::pcmp_eq(b, b), ei::pmax(a, b), b);
  }
};

template <typename T>
struct MinOp : Eigen::internal::scalar_min_op<T, T, Eigen::PropagateNaN> {
  template <typename Packet>
  Packet packetOp(const Packet& a, const Packet& b) const {
    namespace ei = Eigen::internal;
    return ei::pselect(ei::pcmp_eq(b, b), ei::pmin(a, b), b);
  }
};

}  // namespace tfd::kernels::ieee

namespace Eigen::internal {

template <typename T>
struct functor_traits<tfd::kernels::ieee::ExpOp<T>> {
  enum {
    Cost = functor_traits<scalar_exp_op<T>>::Cost + 2 * NumTraits<T>::AddCost,
    PacketAccess = packet_traits<T>::HasExp,
  };
};

template <typename T>
struct functor_traits<tfd::kernels::ieee::LogOp<T>> {
  enum {
    Cost = functor_traits<scalar_log_op<T>>::Cost + 4 * NumTraits<T>::AddCost,
    PacketAccess = packet_traits<T>::HasLog,
  };
};

template <typename T>
struct functor_traits<tfd::kernels::ieee::SqrtOp<T>> {
  enum { Cost = 5 * NumTraits<T>::MulCost, PacketAccess = packet_traits<T>::Vectorizable };
};

template <typename T>
struct functor_traits<tfd::kernels::ieee::RsqrtOp<T>> {
  enum { Cost = 10 * NumTraits<T>::MulCost, PacketAccess = packet_traits<T>::Vectorizable };
};

template <typename T>
struct functor_traits<tfd::kernels::ieee::TanhOp<T>> {
  enum {
    Cost = 2 * functor_traits<scalar_exp_op<T>>::Cost + 10 * NumTraits<T>::MulCost,
    PacketAccess = std::is_same_v<T, float> && packet_traits<T>::HasExpm1,
  };
};

template <typename T>
struct functor_traits<tfd::kernels::ieee::SigmoidOp<T>> {
  enum {
    Cost = functor_traits<tfd::kernels::ieee::ExpOp<T>>::Cost + 10 * NumTraits<T>::MulCost,
    PacketAccess = packet_traits<T>::HasExp && packet_traits<T>::HasDiv,
  };
};

template <typename T>
struct functor_traits<tfd::kernels::ieee::NegOp<T>> {
  enum { Cost = NumTraits<T>::AddCost, PacketAccess = packet_traits<T>::HasNegate };
};

template <typename T>
struct functor_traits<tfd::kernels::ieee::MaxOp<T>> {
  enum { Cost = 3 * NumTraits<T>::AddCost, PacketAccess = packet_traits<T>::HasMax };
};

template <typename T>
struct functor_traits<tfd::kernels::ieee::MinOp<T>> {
  enum { Cost = 3 * NumTraits<T>::AddCost, PacketAccess = packet_traits<T>::HasMin };
};

}  // namespace Eigen::internal
