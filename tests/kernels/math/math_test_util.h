// Helpers shared by the math op tests: building tensors from doubles, reading
// them back, independent naive reference loops (multi-index arithmetic in
// float64, deliberately unlike the kernels' collapsed strided walks) and
// running shape functions.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "common/op_kernel.h"
#include "common/shape_inference.h"
#include "kernels/register_all.h"
#include "tests/util/kernel_runner.h"

namespace tfd::math_test {

// The full op registry, built once per test binary.
inline const OpRegistry& Registry() {
  static OpRegistry registry;
  static const Status status = kernels::RegisterAll(registry);
  if (!status.ok()) FAIL("RegisterAll: " << status.ToString());
  return registry;
}

// A tensor of dtype DTypeOf<T> holding `values` converted from double.
template <typename T>
Tensor Make(const std::vector<int64_t>& dims, const std::vector<double>& values) {
  std::vector<T> v;
  for (double d : values) v.push_back(static_cast<T>(d));
  return Tensor::FromVector<T>(v, TensorShape(dims));
}

inline Tensor MakeOf(DType d, const std::vector<int64_t>& dims,
                     const std::vector<double>& values) {
  TFD_SWITCH_POD(d, T, { return Make<T>(dims, values); }, {});
  FAIL("unsupported dtype in test");
  return Tensor();
}

inline std::vector<double> Values(const Tensor& t) {
  std::vector<double> out;
  TFD_SWITCH_POD(t.dtype(), T, {
    for (int64_t i = 0; i < t.num_elements(); ++i) out.push_back(static_cast<double>(t.data<T>()[i]));
  }, { FAIL("unsupported dtype in test"); });
  return out;
}

// Row-major element count and multi-index helpers.
inline int64_t Count(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}
inline std::vector<int64_t> Unflatten(int64_t flat, const std::vector<int64_t>& dims) {
  std::vector<int64_t> idx(dims.size());
  for (size_t k = dims.size(); k-- > 0;) {
    idx[k] = flat % dims[k];
    flat /= dims[k];
  }
  return idx;
}
inline int64_t Flatten(const std::vector<int64_t>& idx, const std::vector<int64_t>& dims) {
  int64_t flat = 0;
  for (size_t k = 0; k < dims.size(); ++k) flat = flat * dims[k] + idx[k];
  return flat;
}

struct Ref {
  std::vector<int64_t> dims;
  std::vector<double> values;
};

// numpy broadcasting by definition: pad with 1s, each output index reads
// index 0 along the input's size-1 dims.
inline Ref NaiveBroadcast(const std::vector<int64_t>& xd, const std::vector<double>& x,
                          const std::vector<int64_t>& yd, const std::vector<double>& y,
                          const std::function<double(double, double)>& f) {
  const size_t rank = std::max(xd.size(), yd.size());
  std::vector<int64_t> xp(rank, 1), yp(rank, 1), od(rank);
  std::copy(xd.begin(), xd.end(), xp.begin() + (rank - xd.size()));
  std::copy(yd.begin(), yd.end(), yp.begin() + (rank - yd.size()));
  for (size_t k = 0; k < rank; ++k) od[k] = xp[k] == 1 ? yp[k] : xp[k];
  Ref r{od, {}};
  for (int64_t i = 0; i < Count(od); ++i) {
    std::vector<int64_t> idx = Unflatten(i, od), xi = idx, yi = idx;
    for (size_t k = 0; k < rank; ++k) {
      if (xp[k] == 1) xi[k] = 0;
      if (yp[k] == 1) yi[k] = 0;
    }
    r.values.push_back(f(x[Flatten(xi, xp)], y[Flatten(yi, yp)]));
  }
  return r;
}

// Deterministic, varied test data: shift + scale * k with k cycling through
// 0..10 in a scrambled order (so values repeat, giving ties, past 11 elements).
inline std::vector<double> Ramp(int64_t n, double scale = 0.5, double shift = -2.25) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(shift + scale * static_cast<double>((i * 7) % 11));
  return v;
}

// The tensor has exactly these dims and values (relative tolerance `tol`;
// NaN matches NaN, infinities match exactly).
inline void ExpectTensor(const Tensor& t, const std::vector<int64_t>& dims,
                         const std::vector<double>& want, double tol = 1e-12) {
  REQUIRE(t.shape() == TensorShape(dims));
  std::vector<double> got = Values(t);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << " of " << t.shape().ToString());
    if (std::isnan(want[i])) {
      CHECK(std::isnan(got[i]));
    } else if (std::isinf(want[i])) {
      CHECK(got[i] == want[i]);
    } else {
      CHECK(got[i] == Approx(want[i]).epsilon(tol).margin(tol));
    }
  }
}

// Runs `op` and returns its only (or first) output; fails the test on error.
inline Tensor Run1(const std::string& op, AttrMap attrs, std::vector<Tensor> inputs) {
  auto out = testing::RunOp(Registry(), op, std::move(attrs), std::move(inputs));
  INFO(op << ": " << out.status().ToString());
  REQUIRE(out.ok());
  REQUIRE(!out->empty());
  return (*out)[0];
}

// Runs `op` expecting INVALID_ARGUMENT whose message contains each of `parts`.
inline void ExpectInvalid(const std::string& op, AttrMap attrs, std::vector<Tensor> inputs,
                          const std::vector<std::string>& parts) {
  auto out = testing::RunOp(Registry(), op, std::move(attrs), std::move(inputs));
  INFO(op << ": " << out.status().ToString());
  REQUIRE(out.status().code() == Code::kInvalidArgument);
  for (const std::string& p : parts) CHECK(out.status().message().find(p) != std::string::npos);
}

// Runs op's shape function on the given shapes (and known input values).
struct ShapeResult {
  Status status;
  std::vector<PartialShape> outputs;
};
inline ShapeResult InferShapes(const std::string& op, AttrMap attrs,
                               std::vector<PartialShape> shapes,
                               std::vector<const Tensor*> values = {}) {
  const OpRegistration* reg = Registry().Find(op);
  REQUIRE(reg != nullptr);
  REQUIRE(CompleteAndCheckAttrs(reg->def, attrs).ok());
  auto in_types = ArgTypes(reg->def.inputs, attrs);
  auto out_types = ArgTypes(reg->def.outputs, attrs);
  REQUIRE(in_types.ok());
  REQUIRE(out_types.ok());
  values.resize(shapes.size(), nullptr);
  InferenceContext c(attrs, std::move(shapes), *in_types, values,
                     static_cast<int>(out_types->size()));
  ShapeResult r;
  r.status = reg->shape_fn(c);
  r.outputs = c.outputs();
  return r;
}

}  // namespace tfd::math_test
