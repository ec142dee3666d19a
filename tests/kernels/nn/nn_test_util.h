// Helpers shared by the nn kernel tests: building tensors from doubles,
// running one op, and comparing results with float64 references.
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/register_all.h"
#include "tests/util/gradient_check.h"
#include "tests/util/kernel_runner.h"

namespace tfd::testing::nn {

// Every family's ops, as the runtime registers them; built once per binary.
inline const OpRegistry& Registry() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    Status s = kernels::RegisterAll(r);
    INFO(s.ToString());
    REQUIRE(s.ok());
    return r;
  }();
  return registry;
}

inline AttrMap TypeAttr(DType t) { return {{"T", t}}; }

// A tensor of dtype `t` (float32 or float64) holding `values`.
inline Tensor Make(DType t, const std::vector<double>& values, const TensorShape& shape) {
  if (t == DType::kFloat64) return Tensor::FromVector<double>(values, shape);
  std::vector<float> f(values.begin(), values.end());
  return Tensor::FromVector<float>(f, shape);
}

inline Tensor Doubles(const std::vector<double>& values, const TensorShape& shape) {
  return Make(DType::kFloat64, values, shape);
}

// A float32 or float64 tensor's elements as doubles.
inline std::vector<double> Values(const Tensor& t) {
  std::vector<double> out(t.num_elements());
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    out[i] = t.dtype() == DType::kFloat64 ? t.data<double>()[i] : t.data<float>()[i];
  }
  return out;
}

// The outputs of `op`, failing the test case when it fails.
inline std::vector<Tensor> MustRun(const std::string& op, AttrMap attrs,
                                   std::vector<Tensor> inputs) {
  auto out = RunOp(Registry(), op, std::move(attrs), std::move(inputs));
  if (!out.ok()) FAIL(op << ": " << out.status().ToString());
  return std::move(out).value();
}

// Checks `got` has `shape` and matches `want` within atol + rtol * |want|.
inline void CheckClose(const Tensor& got, const TensorShape& shape, const std::vector<double>& want,
                       double atol, double rtol = 0) {
  REQUIRE(got.shape() == shape);
  std::vector<double> v = Values(got);
  REQUIRE(v.size() == want.size());
  for (size_t i = 0; i < v.size(); ++i) {
    INFO("element " << i << ": got " << v[i] << ", want " << want[i]);
    CHECK(std::abs(v[i] - want[i]) <= atol + rtol * std::abs(want[i]));
  }
}

// Tolerances for comparing a dtype's result with a float64 reference.
inline double Tolerance(DType t) { return t == DType::kFloat64 ? 1e-12 : 2e-6; }

// A forward op with one float64 output, as a function for CheckGradient.
inline TensorFunction OpFunction(const std::string& op, AttrMap attrs, int output = 0) {
  return [op, attrs, output](const std::vector<Tensor>& in) -> StatusOr<Tensor> {
    TFD_ASSIGN_OR_RETURN(auto out, RunOp(Registry(), op, attrs, in));
    return out[output];
  };
}

// Deterministic pseudo-random values in [lo, hi) for test inputs.
inline std::vector<double> Spread(int64_t n, double lo, double hi, uint32_t salt = 1) {
  std::vector<double> v(n);
  uint32_t s = 2463534242u ^ salt;
  for (auto& x : v) {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    x = lo + (hi - lo) * (s / 4294967296.0);
  }
  return v;
}

}  // namespace tfd::testing::nn
