// Reductions and the row-wise softmaxes at the IEEE edges, against numpy's
// answers: a NaN anywhere makes Sum, Mean, Max, Min, Prod and the softmaxes
// NaN and ArgMax/ArgMin point at the first NaN; inf + -inf is NaN; a sum of
// -0s is -0; a product of denormals is 0.
//
// Each edge value is placed at every position of a vector of 1 to kMaxLength
// elements (reduced whole) and of the middle row of a [3, n] matrix (reduced
// along its rows, and along its columns: a vector of n partial results),
// among finite fillers; and fills the whole tensor once per length.
#include <algorithm>
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

enum class Layout { kWhole, kRows, kColumns };

// One tensor of the sweep: its values, dims, the reduced axis and, per
// output element, the values reduced into it.
template <typename T>
struct Placement {
  std::vector<T> values;
  std::vector<int64_t> dims;
  int32_t axis = 0;
  std::vector<std::vector<T>> slices;
};

// `edge` at column p of the middle row (of the only row for kWhole), or
// everywhere when p < 0; fillers elsewhere. Prod's fillers are +-1, so that
// no order of products over- or underflows where another does not.
template <typename T>
Placement<T> Place(Layout layout, int64_t n, int64_t p, T edge, bool unit_fillers) {
  auto filler = [&](int64_t i) { return unit_fillers ? T(i % 2 ? -1 : 1) : Filler<T>(i); };
  Placement<T> pl;
  const int64_t rows = layout == Layout::kWhole ? 1 : 3;
  const int64_t middle = rows / 2;
  pl.dims = layout == Layout::kWhole ? std::vector<int64_t>{n} : std::vector<int64_t>{rows, n};
  pl.axis = layout == Layout::kRows ? 1 : 0;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < n; ++c) {
      pl.values.push_back(p < 0 || (r == middle && c == p) ? edge : filler(r * n + c));
    }
  }
  if (layout == Layout::kColumns) {
    for (int64_t c = 0; c < n; ++c) {
      pl.slices.push_back({pl.values[c], pl.values[n + c], pl.values[2 * n + c]});
    }
  } else {
    for (int64_t r = 0; r < rows; ++r) {
      pl.slices.emplace_back(pl.values.begin() + r * n, pl.values.begin() + (r + 1) * n);
    }
  }
  return pl;
}

template <typename T, typename TOut>
struct ReductionCase {
  std::string op;
  std::function<TOut(const std::vector<T>&)> ref;
  Tolerance tol;
  bool unit_fillers = false;
  bool has_axis = true;         // L2Loss reduces everything and takes no axis
  bool tol_per_element = false;  // tol.ulps is per reduced element (Prod)
};

template <typename T>
constexpr T kNan = std::numeric_limits<T>::quiet_NaN();

template <typename T>
bool AnyNan(const std::vector<T>& v) {
  return std::any_of(v.begin(), v.end(), [](T x) { return std::isnan(x); });
}

template <typename T>
W WideSum(const std::vector<T>& v) {
  W s = -0.0L;  // the sum of nothing but -0s is -0
  for (T x : v) s += x;
  return s;
}

template <typename T>
std::vector<ReductionCase<T, T>> FloatReductions() {
  return {
      {"Sum", [](const std::vector<T>& v) { return Round<T>(WideSum(v)); }, Tolerance{4}},
      {"Mean",
       [](const std::vector<T>& v) { return Round<T>(WideSum(v)) / static_cast<T>(v.size()); },
       Tolerance{4}},
      {"Max",
       [](const std::vector<T>& v) {
         return AnyNan(v) ? kNan<T> : *std::max_element(v.begin(), v.end());
       },
       Tolerance{0}},
      {"Min",
       [](const std::vector<T>& v) {
         return AnyNan(v) ? kNan<T> : *std::min_element(v.begin(), v.end());
       },
       Tolerance{0}},
      {"Prod",
       [](const std::vector<T>& v) {
         W prod = 1;
         for (T x : v) prod *= x;
         return Round<T>(prod);
       },
       Tolerance{1}, true, true, true},
      // numpy: np.sum(np.square(t)) / 2, the squares in the dtype.
      {"L2Loss",
       [](const std::vector<T>& v) {
         std::vector<T> sq;
         for (T x : v) sq.push_back(x * x);
         return Round<T>(WideSum(sq)) / T(2);
       },
       Tolerance{4}, false, false},
  };
}

// numpy.argmax / argmin: the first NaN, else the first extreme.
template <typename T>
std::vector<ReductionCase<T, int64_t>> ArgReductions() {
  auto first = [](const std::vector<T>& v, bool max) {
    int64_t best = 0;
    for (int64_t i = 0; i < static_cast<int64_t>(v.size()); ++i) {
      if (std::isnan(v[i])) return i;
      if (max ? v[i] > v[best] : v[i] < v[best]) best = i;
    }
    return best;
  };
  return {{"ArgMax", [first](const std::vector<T>& v) { return first(v, true); }, Tolerance{0}},
          {"ArgMin", [first](const std::vector<T>& v) { return first(v, false); }, Tolerance{0}}};
}

template <typename T, typename TOut>
void CheckPlacement(const ReductionCase<T, TOut>& c, testing::KernelRunner& kernel,
                    const Placement<T>& pl, int64_t n, int64_t p, T edge, Mismatches& m) {
  std::vector<Value> inputs = {Value{Tensor::FromVector(pl.values, TensorShape(pl.dims)), nullptr}};
  if (c.has_axis) inputs.push_back(Value{Tensor::Scalar<int32_t>(pl.axis), nullptr});
  auto out = kernel.Run(std::move(inputs));
  if (!out.ok()) {
    m.Fail(out.status().ToString());
    return;
  }
  const TOut* got = (*out)[0].tensor.template data<TOut>();
  for (size_t o = 0; o < pl.slices.size(); ++o) {
    Tolerance tol = c.tol;
    if (c.tol_per_element) tol.ulps *= static_cast<int>(pl.slices[o].size());
    m.Check(got[o], c.ref(pl.slices[o]), tol, n, p, [&] {
      return "(" + Show(edge) + (p < 0 ? " everywhere" : "") + " in " +
             TensorShape(pl.dims).ToString() + " axis " + std::to_string(pl.axis) + ", output " +
             std::to_string(o) + ")";
    });
  }
}

template <typename T, typename TOut>
void SweepReduction(const ReductionCase<T, TOut>& c) {
  const DType d = DTypeOf<T>::value;
  auto kernel = testing::KernelRunner::Make(Registry(), c.op, {{"T", d}});
  {
    INFO(c.op << " " << DTypeName(d) << ": " << kernel.status().ToString());
    REQUIRE(kernel.ok());
  }
  Mismatches m(c.op, d);
  const std::vector<Layout> layouts = c.has_axis
      ? std::vector<Layout>{Layout::kWhole, Layout::kRows, Layout::kColumns}
      : std::vector<Layout>{Layout::kWhole};
  for (Layout layout : layouts) {
    for (int64_t n = 1; n <= kMaxLength; ++n) {
      for (T edge : EdgeValues<T>()) {
        for (int64_t p = -1; p < n; ++p) {
          CheckPlacement(c, **kernel, Place(layout, n, p, edge, c.unit_fillers), n, p, edge, m);
        }
      }
    }
  }
  m.Report();
}

TEST_CASE("float reductions propagate NaN and keep infinities, zeros and denormals") {
  for (const auto& c : FloatReductions<float>()) SweepReduction(c);
  for (const auto& c : FloatReductions<double>()) SweepReduction(c);
}

TEST_CASE("ArgMax and ArgMin point at the first NaN") {
  for (const auto& c : ArgReductions<float>()) SweepReduction(c);
  for (const auto& c : ArgReductions<double>()) SweepReduction(c);
}

// numpy's stable softmax of one row, in the dtype: shift by the maximum
// (NaN if any is NaN), exponentiate, sum, divide (or subtract the log).
template <typename T>
std::vector<T> SoftmaxRow(const std::vector<T>& row, bool log) {
  const T max = AnyNan(row) ? kNan<T> : *std::max_element(row.begin(), row.end());
  std::vector<T> shifted, exps;
  for (T x : row) {
    shifted.push_back(x - max);
    exps.push_back(std::exp(x - max));
  }
  const T sum = Round<T>(WideSum(exps));
  std::vector<T> out;
  for (size_t i = 0; i < row.size(); ++i) {
    out.push_back(log ? shifted[i] - std::log(sum) : exps[i] / sum);
  }
  return out;
}

template <typename T>
void CheckSoftmaxPlacement(const std::string& op, testing::KernelRunner& kernel,
                           const Placement<T>& pl, int64_t n, int64_t p, T edge, Mismatches& m) {
  // The sum of a row's exponentials is rounded in some order: its log is
  // off by about an epsilon, which LogSoftmax's results near 0 show in full.
  const Tolerance tol{kExpUlps + 3, false, op == "LogSoftmax" ? 4 : 0};
  auto out = kernel.Run({Value{Tensor::FromVector(pl.values, TensorShape(pl.dims)), nullptr}});
  if (!out.ok()) {
    m.Fail(out.status().ToString());
    return;
  }
  const T* got = (*out)[0].tensor.template data<T>();
  for (size_t r = 0; r < pl.slices.size(); ++r) {
    const std::vector<T> want = SoftmaxRow(pl.slices[r], op == "LogSoftmax");
    for (int64_t i = 0; i < n; ++i) {
      m.Check(got[r * n + i], want[i], tol, n, p, [&] {
        return "(" + Show(edge) + (p < 0 ? " everywhere" : "") + " in " +
               TensorShape(pl.dims).ToString() + ", row " + std::to_string(r) + " element " +
               std::to_string(i) + ")";
      });
    }
  }
}

template <typename T>
void SweepSoftmax(const std::string& op) {
  const DType d = DTypeOf<T>::value;
  auto kernel = testing::KernelRunner::Make(Registry(), op, {{"T", d}});
  REQUIRE(kernel.ok());
  Mismatches m(op, d);
  for (Layout layout : {Layout::kWhole, Layout::kRows}) {
    for (int64_t n = 1; n <= kMaxLength; ++n) {
      for (T edge : EdgeValues<T>()) {
        for (int64_t p = -1; p < n; ++p) {
          Placement<T> pl = Place(layout, n, p, edge, false);
          if (layout == Layout::kWhole) pl.dims = {1, n};  // softmax wants a matrix
          CheckSoftmaxPlacement(op, **kernel, pl, n, p, edge, m);
        }
      }
    }
  }
  m.Report();
}

TEST_CASE("Softmax and LogSoftmax at the edges") {
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    SweepSoftmax<float>(op);
    SweepSoftmax<double>(op);
  }
}

}  // namespace
}  // namespace tfd
