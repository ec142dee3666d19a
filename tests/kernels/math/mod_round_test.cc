// The integer side of Mod, FloorMod and FloorDiv (C's truncation against
// Python's flooring, for every sign combination), their zero-divisor errors,
// Round's halves and integers, and the libm functions at ordinary values.
// The float edge cases (inf, NaN, signed zeros, denormals) are swept in
// tests/kernels/numerics/elementwise_edges_test.cc.
#include <climits>
#include <cmath>
#include <cstdint>

#include <catch2/catch.hpp>

#include "tests/kernels/math/math_test_util.h"

namespace tfd {
namespace {

using namespace math_test;  // NOLINT: test helpers

// Python's // and % by definition: q is the largest integer with q * b <= a
// (b > 0) or q * b >= a (b < 0); r = a - q * b.
int64_t PyFloorDiv(int64_t a, int64_t b) {
  int64_t q = 0;
  while (b > 0 ? q * b > a : q * b < a) --q;
  while (b > 0 ? (q + 1) * b <= a : (q + 1) * b >= a) ++q;
  return q;
}

TEST_CASE("integer FloorDiv, FloorMod and Mod against their definitions for every sign") {
  std::vector<double> xs, ys;
  for (int a = -9; a <= 9; ++a) {
    for (int b = -4; b <= 4; ++b) {
      if (b == 0) continue;
      xs.push_back(a);
      ys.push_back(b);
    }
  }
  const int64_t n = static_cast<int64_t>(xs.size());
  std::vector<double> div, floor_mod, trunc_mod;
  for (int64_t i = 0; i < n; ++i) {
    const auto a = static_cast<int64_t>(xs[i]), b = static_cast<int64_t>(ys[i]);
    div.push_back(static_cast<double>(PyFloorDiv(a, b)));
    floor_mod.push_back(static_cast<double>(a - PyFloorDiv(a, b) * b));
    trunc_mod.push_back(static_cast<double>(a - (a / b) * b));  // C truncates
  }
  for (DType d : {DType::kInt32, DType::kInt64}) {
    INFO(DTypeName(d));
    const Tensor x = MakeOf(d, {n}, xs), y = MakeOf(d, {n}, ys);
    ExpectTensor(Run1("FloorDiv", {{"T", d}}, {x, y}), {n}, div, 0);
    ExpectTensor(Run1("FloorMod", {{"T", d}}, {x, y}), {n}, floor_mod, 0);
    ExpectTensor(Run1("Mod", {{"T", d}}, {x, y}), {n}, trunc_mod, 0);
  }
  // Spot values a reader can check: -7 // 2 = -4, -7 % 3 = 2, C's -7 % 3 = -1.
  const Tensor x = Make<int32_t>({3}, {-7, 7, -7}), y = Make<int32_t>({3}, {2, -3, 3});
  ExpectTensor(Run1("FloorDiv", {{"T", DType::kInt32}}, {x, y}), {3}, {-4, -3, -3}, 0);
  ExpectTensor(Run1("FloorMod", {{"T", DType::kInt32}}, {x, y}), {3}, {1, -2, 2}, 0);
  ExpectTensor(Run1("Mod", {{"T", DType::kInt32}}, {x, y}), {3}, {-1, 1, -1}, 0);
}

TEST_CASE("integer MIN divided by -1 wraps instead of trapping") {
  const Tensor x = Tensor::FromVector<int32_t>({INT32_MIN, INT32_MIN});
  const Tensor y = Tensor::FromVector<int32_t>({-1, 1});
  const AttrMap attrs = {{"T", DType::kInt32}};
  ExpectTensor(Run1("FloorDiv", attrs, {x, y}), {2}, {INT32_MIN, INT32_MIN}, 0);
  ExpectTensor(Run1("FloorMod", attrs, {x, y}), {2}, {0, 0}, 0);
  ExpectTensor(Run1("Mod", attrs, {x, y}), {2}, {0, 0}, 0);
}

TEST_CASE("an integer divisor of zero is INVALID_ARGUMENT naming where it is") {
  for (const char* op : {"FloorDiv", "FloorMod", "Mod"}) {
    for (DType d : {DType::kInt32, DType::kInt64}) {
      INFO(op << " " << DTypeName(d));
      ExpectInvalid(op, {{"T", d}}, {MakeOf(d, {3}, {4, 5, 6}), MakeOf(d, {3}, {1, 0, 2})},
                    {"division by zero", "flat index 1"});
      // A broadcast scalar zero too.
      ExpectInvalid(op, {{"T", d}}, {MakeOf(d, {2}, {4, 5}), MakeOf(d, {}, {0})},
                    {"division by zero"});
    }
  }
}

TEST_CASE("float FloorDiv and FloorMod follow Python, Mod follows C's fmod") {
  const AttrMap attrs = {{"T", DType::kFloat64}};
  const Tensor x = Make<double>({4}, {-7.5, 7.5, -7.5, 5});
  const Tensor y = Make<double>({4}, {2, -2, -2, 0.5});
  ExpectTensor(Run1("FloorDiv", attrs, {x, y}), {4}, {-4, -4, 3, 10}, 0);
  ExpectTensor(Run1("FloorMod", attrs, {x, y}), {4}, {0.5, -0.5, -1.5, 0}, 0);
  ExpectTensor(Run1("Mod", attrs, {x, y}), {4}, {-1.5, 1.5, -1.5, 0}, 0);
  // Broadcasting: a [2, 2] by a [2] divisor.
  ExpectTensor(Run1("FloorMod", attrs, {Make<double>({2, 2}, {-1, 1, -3, 3}),
                                        Make<double>({2}, {2, -2})}),
               {2, 2}, {1, -1, 1, -1}, 0);
}

TEST_CASE("Round takes halves to the even neighbour and leaves integers alone") {
  for (DType d : {DType::kFloat32, DType::kFloat64}) {
    INFO(DTypeName(d));
    ExpectTensor(Run1("Round", {{"T", d}},
                      {MakeOf(d, {8}, {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999, -3.7})}),
                 {8}, {0, 2, 2, -0.0, -2, -2, 2, -4}, 0);
    ExpectTensor(Run1("Ceil", {{"T", d}}, {MakeOf(d, {4}, {-1.5, -0.5, 0.25, 3})}), {4},
                 {-1, -0.0, 1, 3}, 0);
  }
  for (DType d : {DType::kInt32, DType::kInt64}) {
    ExpectTensor(Run1("Round", {{"T", d}}, {MakeOf(d, {3}, {-7, 0, 123456})}), {3},
                 {-7, 0, 123456}, 0);
  }
}

TEST_CASE("trigonometric, hyperbolic and error functions match float64 references") {
  const std::vector<double> any = {-2.5, -1, -0.3, 0, 0.2, 0.9, 1.7, 3};
  const std::vector<double> unit = {-0.99, -0.5, -0.1, 0, 0.25, 0.6, 0.8, 0.999};
  const std::vector<double> above_one = {1, 1.01, 1.5, 2, 3.5, 10, 100, 1e4};
  struct Case {
    const char* op;
    double (*ref)(double);
    const std::vector<double>* xs;
  };
  const Case cases[] = {
      {"Sin", std::sin, &any},     {"Cos", std::cos, &any},     {"Tan", std::tan, &any},
      {"Asin", std::asin, &unit},  {"Acos", std::acos, &unit},  {"Atan", std::atan, &any},
      {"Sinh", std::sinh, &any},   {"Cosh", std::cosh, &any},   {"Asinh", std::asinh, &any},
      {"Acosh", std::acosh, &above_one}, {"Atanh", std::atanh, &unit}, {"Erf", std::erf, &any},
  };
  for (const Case& c : cases) {
    for (DType d : {DType::kFloat64, DType::kFloat32}) {
      INFO(c.op << " " << DTypeName(d));
      std::vector<double> want;
      for (double v : Values(MakeOf(d, {8}, *c.xs))) want.push_back(c.ref(v));
      const Tensor y = Run1(c.op, {{"T", d}}, {MakeOf(d, {2, 4}, *c.xs)});
      CHECK(y.dtype() == d);
      ExpectTensor(y, {2, 4}, want, d == DType::kFloat32 ? 2e-7 : 1e-15);
      ExpectTensor(Run1(c.op, {{"T", d}}, {MakeOf(d, {0, 3}, {})}), {0, 3}, {});
    }
  }
}

TEST_CASE("the float-only ops refuse integer tensors") {
  for (const char* op : {"Sin", "Erf", "Ceil", "IsNan"}) {
    INFO(op);
    auto out = testing::RunOp(Registry(), op, {{"T", DType::kInt32}}, {Make<int32_t>({1}, {4})});
    CHECK(out.status().code() == Code::kInvalidArgument);
  }
}

}  // namespace
}  // namespace tfd
