// Sum, Mean, Max, Min, Prod, ArgMax, ArgMin against a naive multi-index
// reduction in float64, over axis patterns that exercise every path (full,
// rows, columns, general), negative axes, keep_dims and empty tensors.
#include <cmath>
#include <limits>
#include <set>

#include <catch2/catch.hpp>

#include "tests/kernels/math/math_test_util.h"

namespace tfd {
namespace {

using namespace math_test;  // NOLINT: test helpers
using Dims = std::vector<int64_t>;

// The reduction by definition: every input element, by multi-index, joins
// the output element with its reduced coordinates removed.
Ref NaiveReduce(const std::string& op, const Dims& dims, const std::vector<double>& x,
                const Dims& axes, bool keep_dims) {
  const int rank = static_cast<int>(dims.size());
  std::set<int64_t> reduced;
  for (int64_t a : axes) reduced.insert(a < 0 ? a + rank : a);
  Dims out_dims;
  for (int d = 0; d < rank; ++d) {
    if (!reduced.count(d)) out_dims.push_back(dims[d]);
    else if (keep_dims) out_dims.push_back(1);
  }
  const int64_t n_out = Count(out_dims);
  double init = 0;
  if (op == "Prod") init = 1;
  if (op == "Max") init = -INFINITY;
  if (op == "Min") init = INFINITY;
  std::vector<double> acc(n_out, init), count(n_out, 0);
  for (int64_t i = 0; i < Count(dims); ++i) {
    Dims idx = Unflatten(i, dims), oidx;
    for (int d = 0; d < rank; ++d) {
      if (!reduced.count(d)) oidx.push_back(idx[d]);
      else if (keep_dims) oidx.push_back(0);
    }
    const int64_t o = Flatten(oidx, out_dims);
    if (op == "Sum" || op == "Mean") acc[o] += x[i];
    if (op == "Prod") acc[o] *= x[i];
    if (op == "Max") acc[o] = std::max(acc[o], x[i]);
    if (op == "Min") acc[o] = std::min(acc[o], x[i]);
    count[o] += 1;
  }
  if (op == "Mean") {
    for (int64_t o = 0; o < n_out; ++o) acc[o] = count[o] == 0 ? NAN : acc[o] / count[o];
  }
  return {out_dims, acc};
}

struct Case {
  Dims dims;
  Dims axes;
};

// Axis patterns: full, rows, columns, a middle axis, alternating, negative,
// duplicated, none, and size-1 / size-0 dims in the mix.
const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
      {{6}, {0}},          {{2, 3}, {1}},          {{2, 3}, {0}},       {{2, 3}, {0, 1}},
      {{2, 3}, {-1}},      {{2, 3}, {-2, 1}},      {{2, 3}, {}},        {{2, 3, 4}, {1}},
      {{2, 3, 4}, {0, 2}}, {{2, 3, 4}, {-1, -3}},  {{2, 3, 4, 5}, {1, 3}},
      {{3, 1, 4}, {0}},    {{3, 1, 4}, {1}},       {{2, 2}, {1, 1, -1}}, {{}, {}},
      {{0, 3}, {1}},       {{2, 0, 3}, {0, 2}},    {{1, 1}, {0, 1}}};
  return cases;
}

// Test data: Prod gets values near 1 in magnitude so products stay exact and
// in range; the others a spread of both signs.
std::vector<double> ReductionInput(const std::string& op, int64_t n, bool integral) {
  if (op != "Prod") return Ramp(n, integral ? 1 : 0.25, -1.25);
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = (i * 7) % 3;
    v.push_back(k == 0 ? 1 : (k == 1 ? -1 : (integral ? 2 : 1.5)));
  }
  return v;
}

void CheckReduction(const std::string& op, DType d, double tol) {
  const bool integral = d == DType::kInt32 || d == DType::kInt64;
  for (const Case& c : Cases()) {
    for (bool keep : {false, true}) {
      for (DType tidx : {DType::kInt32, DType::kInt64}) {
        Tensor input = MakeOf(d, c.dims, ReductionInput(op, Count(c.dims), integral));
        // A lone axis of a matrix goes in as a scalar, the rest as vectors.
        const bool scalar_axis = c.axes.size() == 1 && c.dims.size() == 2;
        std::vector<double> axes_d(c.axes.begin(), c.axes.end());
        Tensor axes = MakeOf(tidx, scalar_axis ? Dims{} : Dims{static_cast<int64_t>(c.axes.size())},
                             axes_d);
        Ref want = NaiveReduce(op, c.dims, Values(input), c.axes, keep);
        INFO(op << " " << DTypeName(d) << " of " << TensorShape(c.dims).ToString() << " over "
                << axes.DebugString() << " keep_dims=" << keep);
        const AttrMap attrs = {{"T", d}, {"Tidx", tidx}, {"keep_dims", keep}};
        bool undefined = false;  // an integer Max/Min/Mean over nothing
        for (double& v : want.values) {
          if (integral) v = std::trunc(v);  // integer Mean truncates
          undefined = undefined || (integral && (std::isnan(v) || std::isinf(v)));
        }
        if (undefined) {
          ExpectInvalid(op, attrs, {input, axes}, {"empty"});
        } else {
          ExpectTensor(Run1(op, attrs, {input, axes}), want.dims, want.values, tol);
        }
      }
    }
  }
}

TEST_CASE("reductions match the naive definition") {
  for (const char* op : {"Sum", "Mean", "Max", "Min", "Prod"}) {
    CheckReduction(op, DType::kFloat64, 1e-12);
    CheckReduction(op, DType::kFloat32, 1e-5);
    CheckReduction(op, DType::kInt32, 0);
    CheckReduction(op, DType::kInt64, 0);
  }
}

TEST_CASE("integer reductions by hand, with Mean truncating toward zero") {
  Tensor x = Make<int32_t>({2, 3}, {1, -2, 7, 4, 4, -9});
  const Tensor axis = Make<int32_t>({}, {1});
  ExpectTensor(Run1("Sum", {{"T", DType::kInt32}}, {x, axis}), {2}, {6, -1});
  ExpectTensor(Run1("Mean", {{"T", DType::kInt32}}, {x, axis}), {2}, {2, 0});
  ExpectTensor(Run1("Max", {{"T", DType::kInt32}}, {x, axis}), {2}, {7, 4});
  ExpectTensor(Run1("Min", {{"T", DType::kInt32}}, {x, axis}), {2}, {-2, -9});
  ExpectTensor(Run1("Prod", {{"T", DType::kInt32}}, {x, axis}), {2}, {-14, -144});
  ExpectTensor(Run1("Mean", {{"T", DType::kInt64}, {"keep_dims", true}},
                    {Make<int64_t>({2, 2}, {-3, -4, 10, 11}), Make<int32_t>({1}, {0})}),
               {1, 2}, {3, 3});
  ExpectTensor(Run1("Sum", {{"T", DType::kUInt8}},
                    {Make<uint8_t>({3}, {200, 50, 10}), Make<int32_t>({}, {0})}),
               {}, {4});  // wraps modulo 256, as TensorFlow's does
}

TEST_CASE("reductions over no elements") {
  const Tensor empty = Make<double>({2, 0}, {});
  const Tensor axis1 = Make<int32_t>({}, {1});
  ExpectTensor(Run1("Sum", {{"T", DType::kFloat64}}, {empty, axis1}), {2}, {0, 0});
  ExpectTensor(Run1("Prod", {{"T", DType::kFloat64}}, {empty, axis1}), {2}, {1, 1});
  ExpectTensor(Run1("Mean", {{"T", DType::kFloat64}}, {empty, axis1}), {2}, {NAN, NAN});
  ExpectTensor(Run1("Max", {{"T", DType::kFloat64}}, {empty, axis1}), {2}, {-INFINITY, -INFINITY});
  ExpectTensor(Run1("Min", {{"T", DType::kFloat32}}, {Make<float>({2, 0}, {}), axis1}), {2},
               {INFINITY, INFINITY});
  // Integers have no value for an empty Max, Min or Mean.
  for (const char* op : {"Max", "Min", "Mean"}) {
    ExpectInvalid(op, {{"T", DType::kInt32}}, {Make<int32_t>({2, 0}, {}), axis1},
                  {"empty", "[2, 0]"});
  }
  ExpectTensor(Run1("Sum", {{"T", DType::kInt64}}, {Make<int64_t>({0}, {}), Make<int32_t>({}, {0})}),
               {}, {0});
  // An empty output needs no value at all.
  ExpectTensor(Run1("Max", {{"T", DType::kInt32}}, {Make<int32_t>({0, 3}, {}), axis1}), {0}, {});
}

TEST_CASE("reduction axes out of range are INVALID_ARGUMENT naming the axis") {
  const Tensor x = Make<float>({2, 3}, Ramp(6));
  ExpectInvalid("Sum", {{"T", DType::kFloat32}}, {x, Make<int32_t>({}, {2})},
                {"Invalid reduction dimension 2", "2 dimensions"});
  ExpectInvalid("Max", {{"T", DType::kFloat32}}, {x, Make<int32_t>({2}, {0, -3})},
                {"dimension -3"});
  ExpectInvalid("Mean", {{"T", DType::kFloat32}}, {Make<float>({}, {1}), Make<int32_t>({}, {0})},
                {"dimension 0", "0 dimensions"});
  ExpectInvalid("Sum", {{"T", DType::kFloat32}}, {x, Make<int32_t>({1, 1}, {0})},
                {"reduction_indices", "[1, 1]"});
}

// ArgMax / ArgMin by definition: the first index of the extreme value.
Ref NaiveArg(bool max, const Dims& dims, const std::vector<double>& x, int axis) {
  Dims out_dims = dims;
  out_dims.erase(out_dims.begin() + axis);
  std::vector<double> best(Count(out_dims), 0), idx(Count(out_dims), -1);
  for (int64_t i = 0; i < Count(dims); ++i) {
    Dims mi = Unflatten(i, dims), oi = mi;
    oi.erase(oi.begin() + axis);
    const int64_t o = Flatten(oi, out_dims);
    if (idx[o] < 0 || (max ? x[i] > best[o] : x[i] < best[o])) {
      best[o] = x[i];
      idx[o] = static_cast<double>(mi[axis]);
    }
  }
  return {out_dims, idx};
}

TEST_CASE("ArgMax and ArgMin return the first extreme index along an axis") {
  const std::vector<std::pair<Dims, int64_t>> cases = {
      {{7}, 0}, {{3, 4}, 0}, {{3, 4}, 1}, {{3, 4}, -1}, {{2, 3, 4}, 1}, {{2, 3, 4}, -3}, {{0, 3}, 1}};
  for (const auto& [dims, a] : cases) {
    for (bool max : {true, false}) {
      for (DType out : {DType::kInt64, DType::kInt32}) {
        // Ramp repeats values, so ties occur.
        const auto x = Ramp(Count(dims), 1, -5);
        const int axis = static_cast<int>(a < 0 ? a + static_cast<int64_t>(dims.size()) : a);
        Ref want = NaiveArg(max, dims, x, axis);
        INFO((max ? "ArgMax" : "ArgMin") << " of " << TensorShape(dims).ToString() << " axis " << a);
        Tensor got = Run1(max ? "ArgMax" : "ArgMin", {{"T", DType::kFloat32}, {"output_type", out}},
                          {Make<float>(dims, x), Make<int32_t>({}, {static_cast<double>(a)})});
        CHECK(got.dtype() == out);
        ExpectTensor(got, want.dims, want.values, 0);
      }
    }
  }
  ExpectTensor(Run1("ArgMax", {{"T", DType::kInt64}, {"Tidx", DType::kInt64}},
                    {Make<int64_t>({4}, {3, 9, 9, -1}), Make<int64_t>({}, {0})}),
               {}, {1});
}

TEST_CASE("ArgMax refuses an empty axis and an axis out of range") {
  ExpectInvalid("ArgMax", {{"T", DType::kFloat32}}, {Make<float>({2, 0}, {}), Make<int32_t>({}, {1})},
                {"axis 1 is empty", "[2, 0]"});
  ExpectInvalid("ArgMin", {{"T", DType::kFloat32}}, {Make<float>({2, 3}, Ramp(6)), Make<int32_t>({}, {2})},
                {"[-2, 2)", "got 2"});
  ExpectInvalid("ArgMin", {{"T", DType::kFloat32}}, {Make<float>({2, 3}, Ramp(6)), Make<int32_t>({1}, {0})},
                {"scalar"});
}

}  // namespace
}  // namespace tfd
