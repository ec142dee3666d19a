// Helpers for the array kernel tests: a filled registry, tensor literals,
// element checks against double-precision references, and a direct way to
// run an op's shape function on partial shapes.
#pragma once

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "common/op_kernel.h"
#include "kernels/register_all.h"
#include "tests/util/kernel_runner.h"

namespace tfd::array_test {

// Filled once; read-only afterwards, so test cases may share it.
inline const OpRegistry& Ops() {
  static const OpRegistry reg = [] {
    OpRegistry r;
    const Status s = kernels::RegisterAll(r);
    INFO(s.ToString());
    REQUIRE(s.ok());
    return r;
  }();
  return reg;
}

inline StatusOr<std::vector<Tensor>> Run(const std::string& op, AttrMap attrs,
                                         std::vector<Tensor> inputs) {
  return testing::RunOp(Ops(), op, std::move(attrs), std::move(inputs));
}

// Runs an op that must succeed and produce exactly one output.
inline Tensor RunOne(const std::string& op, AttrMap attrs, std::vector<Tensor> inputs) {
  auto out = Run(op, std::move(attrs), std::move(inputs));
  INFO(op << ": " << out.status().ToString());
  REQUIRE(out.ok());
  REQUIRE(out->size() == 1);
  return (*out)[0];
}

inline Tensor F64(const std::vector<double>& v, const TensorShape& s) {
  return Tensor::FromVector<double>(v, s);
}
inline Tensor F32(const std::vector<float>& v, const TensorShape& s) {
  return Tensor::FromVector<float>(v, s);
}
inline Tensor I32(const std::vector<int32_t>& v, const TensorShape& s) {
  return Tensor::FromVector<int32_t>(v, s);
}
inline Tensor I32(const std::vector<int32_t>& v) { return Tensor::FromVector<int32_t>(v); }
inline Tensor I64(const std::vector<int64_t>& v, const TensorShape& s) {
  return Tensor::FromVector<int64_t>(v, s);
}
inline Tensor I64(const std::vector<int64_t>& v) { return Tensor::FromVector<int64_t>(v); }
inline Tensor Str(const std::vector<std::string>& v, const TensorShape& s) {
  return Tensor::FromVector<std::string>(v, s);
}

// 0, 1, 2, ... as float64, for inputs whose values only need to be distinct.
inline Tensor Iota(const TensorShape& s) {
  std::vector<double> v(s.num_elements());
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  return F64(v, s);
}

// Element i of a numeric or bool tensor, as double.
inline double At(const Tensor& t, int64_t i) {
  double v = 0;
  TFD_SWITCH_POD(t.dtype(), T, v = static_cast<double>(t.data<T>()[i]), FAIL("not numeric"));
  return v;
}

// The tensor has this dtype, shape and (exactly) these values.
inline void CheckTensor(const Tensor& t, DType dtype, const TensorShape& shape,
                        const std::vector<double>& expected) {
  INFO("got " << t.Describe() << " " << t.DebugString(64));
  REQUIRE(t.dtype() == dtype);
  REQUIRE(t.shape() == shape);
  REQUIRE(static_cast<size_t>(t.num_elements()) == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    INFO("element " << i);
    CHECK(At(t, static_cast<int64_t>(i)) == expected[i]);
  }
}

// The status is INVALID_ARGUMENT and its message contains `part`.
inline void CheckInvalid(const Status& s, const std::string& part) {
  INFO(s.ToString());
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK(s.message().find(part) != std::string::npos);
}

// Both tensors view the same memory (the op returned a view, not a copy).
inline bool SharesBuffer(const Tensor& a, const Tensor& b) { return a.buffer() == b.buffer(); }

// Runs op's shape function. `values` gives the inputs whose value is known
// (as if they came from a Const), by input index.
inline StatusOr<std::vector<PartialShape>> InferShapes(const std::string& op, AttrMap attrs,
                                                       std::vector<PartialShape> shapes,
                                                       const std::map<int, Tensor>& values = {}) {
  TFD_ASSIGN_OR_RETURN(const OpRegistration* reg, Ops().Lookup(op));
  TFD_RETURN_IF_ERROR(CompleteAndCheckAttrs(reg->def, attrs));
  TFD_ASSIGN_OR_RETURN(auto in_types, ArgTypes(reg->def.inputs, attrs));
  TFD_ASSIGN_OR_RETURN(auto out_types, ArgTypes(reg->def.outputs, attrs));
  REQUIRE(in_types.size() == shapes.size());
  std::vector<const Tensor*> known(shapes.size(), nullptr);
  for (const auto& [i, t] : values) known[i] = &t;
  InferenceContext c(attrs, std::move(shapes), in_types, known,
                     static_cast<int>(out_types.size()));
  TFD_RETURN_IF_ERROR(reg->shape_fn(c));
  return c.outputs();
}

// The shape function's single output, which must succeed.
inline PartialShape InferOne(const std::string& op, AttrMap attrs, std::vector<PartialShape> shapes,
                             const std::map<int, Tensor>& values = {}) {
  auto out = InferShapes(op, std::move(attrs), std::move(shapes), values);
  INFO(op << ": " << out.status().ToString());
  REQUIRE(out.ok());
  REQUIRE(out->size() == 1);
  return (*out)[0];
}

inline PartialShape Unknown() { return PartialShape::Unknown(); }

}  // namespace tfd::array_test
