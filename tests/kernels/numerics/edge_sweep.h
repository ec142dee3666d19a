// Helpers of the IEEE edge sweeps: the edge values of a float type, tensors
// of every length from 1 to past two vector blocks with the edge values
// rotated through every position, and a comparison that demands the exact
// IEEE class of the reference (inf, -inf, NaN, signed zero, a denormal rather
// than a zero) and a bounded distance in ulps for finite results.
//
// The lengths matter: Eigen evaluates a tensor in whole vector packets and
// finishes the elements past the last whole packet one at a time, so a
// kernel whose packet code is wrong is right on a tensor shorter than one
// packet and wrong on a longer one. A 512-bit vector holds 16 float32 values,
// so lengths 1..33 put every value in a packet, after one and in the tail.
//
//   Mismatches m("Sqrt", DType::kFloat32);
//   for (...)  // every length n, every run, every element p
//     m.Check(y[p], std::sqrt(x[p]), Tolerance{0}, n, p, [&] { return "(" + Show(x[p]) + ")"; });
//   m.Report();   // one Catch2 check, naming the inputs that went wrong
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <catch2/catch.hpp>

#include "common/dtype.h"
#include "common/op_kernel.h"
#include "kernels/register_all.h"

namespace tfd::edge_sweep {

// Two 512-bit vectors of float32, plus one.
inline constexpr int kMaxLength = 33;

// The full op registry, built once per test binary.
inline const OpRegistry& Registry() {
  static OpRegistry registry;
  static const Status status = kernels::RegisterAll(registry);
  if (!status.ok()) FAIL("RegisterAll: " << status.ToString());
  return registry;
}

// The values where float kernels go wrong: the IEEE specials, both zeros,
// the denormal range and its borders, small integers, the largest finite
// values and the points where exp overflows or its result becomes denormal.
template <typename T>
std::vector<T> EdgeValues() {
  using L = std::numeric_limits<T>;
  const T inf = L::infinity(), largest_denormal = L::min() - L::denorm_min();
  std::vector<T> v = {
      inf, -inf, L::quiet_NaN(), T(0), -T(0),                                  // specials
      L::denorm_min(), -L::denorm_min(), largest_denormal, -largest_denormal,  // denormals
      L::min(), -L::min(), L::max(), -L::max(),                                // normal extremes
      T(1), T(-1), T(2), T(-2), T(0.5), T(0.3), T(3), T(-7.5), T(20), T(-20)};
  if constexpr (std::is_same_v<T, float>) {
    // 1e-40 is Log(1e-40) of the issue; exp overflows past 88.72 and turns
    // denormal below -87.34; 1e30 squares past the largest float.
    v.insert(v.end(), {1e-40f, 88.7f, 89.0f, -88.0f, -100.0f, -104.0f, 1e30f, -1e30f});
  } else {
    v.insert(v.end(), {1e-310, 709.7, 710.0, -708.5, -740.0, -746.0, 1e300, -1e300});
  }
  return v;
}

// Fillers for reductions: positive, exact, far from every edge (a sum of
// them never cancels to zero, so an added denormal is rightly lost).
template <typename T>
T Filler(int64_t i) {
  return T(0.25) * T(1 + (i * 7) % 11);
}

template <typename T>
T Round(long double v) {
  return static_cast<T>(v);
}

// Floats in order as integers one ulp apart; -0 and +0 are both 0.
template <typename T>
int64_t Ordinal(T v) {
  if constexpr (std::is_same_v<T, float>) {
    int32_t i;
    std::memcpy(&i, &v, sizeof v);
    return i < 0 ? int64_t{INT32_MIN} - i : i;
  } else {
    int64_t i;
    std::memcpy(&i, &v, sizeof v);
    return i < 0 ? INT64_MIN - i : i;
  }
}

template <typename T>
std::string Show(T v) {
  std::ostringstream s;
  s.precision(std::numeric_limits<T>::max_digits10);
  s << v;
  return s.str();
}

// Eigen's vectorised exp, which the kernels use for |x| <= 87 (float32),
// is at most 4 ulps from the correctly rounded result: checked for every
// float32 (float64: within 2 ulps on 2e7 samples).
inline constexpr int kExpUlps = 4;

struct Tolerance {
  int ulps = 0;                 // for finite, non-zero references
  bool zero_sign_free = false;  // either zero where both are allowed (max(-0, +0))
  // An absolute error allowed besides, in units of the dtype's epsilon, for
  // results that are a difference of rounded terms (LogSoftmax near 0).
  int epsilons = 0;
};

// Why `got` is not `want` within `tol`, or "" when it is. NaN payloads are
// free; NaN-ness, infinities, the sign of a zero and denormal-vs-zero are not
// (unless an absolute error is allowed).
template <typename T>
std::string Difference(T got, T want, Tolerance tol) {
  if (std::isnan(want) || std::isnan(got)) {
    return std::isnan(want) && std::isnan(got) ? "" : "wrong class";
  }
  if (std::isinf(want) || std::isinf(got)) return got == want ? "" : "wrong class";
  if (tol.epsilons > 0 &&
      std::fabs(got - want) <= tol.epsilons * std::numeric_limits<T>::epsilon()) {
    return "";
  }
  if (want == 0 || got == 0) {
    if (got != want) return "wrong class";
    return tol.zero_sign_free || std::signbit(got) == std::signbit(want) ? "" : "wrong zero sign";
  }
  if (std::signbit(got) != std::signbit(want)) return "wrong sign";
  const int64_t d = Ordinal(got) - Ordinal(want);
  if (d > tol.ulps || -d > tol.ulps) return std::to_string(d < 0 ? -d : d) + " ulps off";
  return "";
}

// Collects the differences of one op and dtype; Report() is one Catch2
// check naming how many elements were wrong, the inputs that went wrong, the
// shortest tensor they went wrong in and the first few differences.
class Mismatches {
 public:
  Mismatches(std::string op, DType dtype) : op_(std::move(op)), dtype_(dtype) {}

  // Element p of a tensor of n elements. `inputs()` names the element's
  // inputs, as "(x)" or "(x, y)"; it is called only for a difference.
  template <typename T, typename Inputs>
  void Check(T got, T want, Tolerance tol, int64_t n, int64_t p, const Inputs& inputs) {
    ++checked_;
    std::string why;
    if constexpr (std::is_floating_point_v<T>) {
      why = Difference(got, want, tol);
    } else if (got != want) {  // bools, indices: exact
      why = "wrong value";
    }
    if (why.empty()) return;
    const std::string in = inputs();
    if (++count_ <= kShown) {
      examples_ += "\n  " + op_ + in + " at " + std::to_string(p) + " of " + std::to_string(n) +
                   ": got " + ShowAny(got) + ", want " + ShowAny(want) + " (" + why + ")";
    }
    if (inputs_.size() < kInputsShown) inputs_.insert(in);
    if (shortest_ == 0 || n < shortest_) shortest_ = n;
  }
  void Fail(const std::string& what) {
    if (++count_ <= kShown) examples_ += "\n  " + what;
  }
  void Report() const {
    std::string in;
    for (const std::string& s : inputs_) in += " " + s;
    INFO(op_ << " " << DTypeName(dtype_) << ": " << count_ << " of " << checked_
             << " elements differ from the reference; shortest tensor " << shortest_
             << "; inputs" << in << examples_);
    CHECK(checked_ > 0);
    CHECK(count_ == 0);
  }

 private:
  template <typename T>
  static std::string ShowAny(T v) {
    if constexpr (std::is_floating_point_v<T>) return Show(v);
    return std::to_string(v);
  }

  static constexpr int kShown = 6;
  static constexpr size_t kInputsShown = 40;
  std::string op_;
  DType dtype_;
  int64_t checked_ = 0, count_ = 0, shortest_ = 0;
  std::set<std::string> inputs_;
  std::string examples_;
};

}  // namespace tfd::edge_sweep
