// The math ops' shape functions on known, partially known and unknown
// shapes, with and without constant inputs.
#include <catch2/catch.hpp>

#include "tests/kernels/math/math_test_util.h"

namespace tfd {
namespace {

using namespace math_test;  // NOLINT: test helpers

PartialShape Out(const std::string& op, AttrMap attrs, std::vector<PartialShape> shapes,
                 std::vector<const Tensor*> values = {}) {
  ShapeResult r = InferShapes(op, std::move(attrs), std::move(shapes), std::move(values));
  INFO(op << ": " << r.status.ToString());
  REQUIRE(r.status.ok());
  return r.outputs[0];
}

void ExpectShapeError(const std::string& op, AttrMap attrs, std::vector<PartialShape> shapes,
                      const std::vector<std::string>& parts, std::vector<const Tensor*> values = {}) {
  ShapeResult r = InferShapes(op, std::move(attrs), std::move(shapes), std::move(values));
  INFO(op << ": " << r.status.ToString());
  REQUIRE(r.status.code() == Code::kInvalidArgument);
  for (const std::string& p : parts) CHECK(r.status.message().find(p) != std::string::npos);
}

const AttrMap kF32 = {{"T", DType::kFloat32}};

TEST_CASE("binary ops infer the broadcast shape") {
  for (const char* op : {"Add", "Div", "Pow", "Greater", "Equal"}) {
    CHECK(Out(op, kF32, {PartialShape({2, 3}), PartialShape({3})}) == PartialShape({2, 3}));
    CHECK(Out(op, kF32, {PartialShape({2, 1}), PartialShape({1, 3})}) == PartialShape({2, 3}));
    CHECK(Out(op, kF32, {PartialShape({}), PartialShape({2, 3})}) == PartialShape({2, 3}));
    CHECK(Out(op, kF32, {PartialShape({-1, 3}), PartialShape({3})}) == PartialShape({-1, 3}));
    CHECK(Out(op, kF32, {PartialShape({-1, 1}), PartialShape({5, 4})}) == PartialShape({5, 4}));
    CHECK(!Out(op, kF32, {PartialShape::Unknown(), PartialShape({3})}).rank_known());
    ExpectShapeError(op, kF32, {PartialShape({2, 3}), PartialShape({4})}, {"[2, 3]", "[4]"});
  }
  CHECK(Out("LogicalAnd", {}, {PartialShape({4, 1}), PartialShape({2})}) == PartialShape({4, 2}));
}

TEST_CASE("unary ops keep their input's shape") {
  for (const char* op : {"Neg", "Sqrt", "Exp", "Floor"}) {
    CHECK(Out(op, kF32, {PartialShape({-1, 7})}) == PartialShape({-1, 7}));
    CHECK(!Out(op, kF32, {PartialShape::Unknown()}).rank_known());
  }
}

TEST_CASE("MatMul infers [m, n] and checks the inner dimensions") {
  CHECK(Out("MatMul", kF32, {PartialShape({2, 3}), PartialShape({3, 5})}) == PartialShape({2, 5}));
  CHECK(Out("MatMul", {{"T", DType::kFloat32}, {"transpose_a", true}, {"transpose_b", true}},
            {PartialShape({3, 2}), PartialShape({5, 3})}) == PartialShape({2, 5}));
  CHECK(Out("MatMul", kF32, {PartialShape({-1, 3}), PartialShape({-1, -1})}) ==
        PartialShape({-1, -1}));
  CHECK(Out("MatMul", kF32, {PartialShape::Unknown(), PartialShape({3, 4})}) ==
        PartialShape({-1, 4}));
  ExpectShapeError("MatMul", kF32, {PartialShape({2, 3}), PartialShape({4, 5})},
                   {"[2, 3]", "[4, 5]"});
  ExpectShapeError("MatMul", kF32, {PartialShape({2, 3, 1}), PartialShape({3, 5})},
                   {"rank 2", "[2, 3, 1]"});
}

TEST_CASE("reductions infer the output from constant axes") {
  const Tensor axis_last = Make<int32_t>({}, {-1});
  const Tensor axes_02 = Make<int64_t>({2}, {0, 2});
  const AttrMap keep = {{"T", DType::kFloat32}, {"keep_dims", true}};
  const AttrMap i64 = {{"T", DType::kFloat32}, {"Tidx", DType::kInt64}};
  CHECK(Out("Sum", kF32, {PartialShape({2, -1, 4}), PartialShape({})}, {nullptr, &axis_last}) ==
        PartialShape({2, -1}));
  CHECK(Out("Max", keep, {PartialShape({2, -1, 4}), PartialShape({})}, {nullptr, &axis_last}) ==
        PartialShape({2, -1, 1}));
  CHECK(Out("Mean", i64, {PartialShape({2, 3, 4}), PartialShape({2})}, {nullptr, &axes_02}) ==
        PartialShape({3}));
  // Unknown axes: only keep_dims fixes the rank.
  CHECK(Out("Sum", keep, {PartialShape({2, 3}), PartialShape({-1})}) == PartialShape::UnknownOfRank(2));
  CHECK(!Out("Sum", kF32, {PartialShape({2, 3}), PartialShape({-1})}).rank_known());
  const Tensor axis_bad = Make<int32_t>({}, {3});
  ExpectShapeError("Prod", kF32, {PartialShape({2, 3, 4}), PartialShape({})},
                   {"Invalid reduction dimension 3"}, {nullptr, &axis_bad});
  ExpectShapeError("Min", kF32, {PartialShape({2, 3}), PartialShape({1, 1})}, {"reduction_indices"});
}

TEST_CASE("ArgMax drops the reduced axis") {
  const Tensor dim = Make<int32_t>({}, {1});
  CHECK(Out("ArgMax", kF32, {PartialShape({-1, 5, 2}), PartialShape({})}, {nullptr, &dim}) ==
        PartialShape({-1, 2}));
  CHECK(Out("ArgMin", kF32, {PartialShape({4, 5}), PartialShape({})}) == PartialShape::UnknownOfRank(1));
  const Tensor bad = Make<int32_t>({}, {-3});
  ExpectShapeError("ArgMax", kF32, {PartialShape({4, 5}), PartialShape({})}, {"[-2, 2)"},
                   {nullptr, &bad});
}

TEST_CASE("Select, AddN and the gradient ops merge their inputs' shapes") {
  CHECK(Out("Select", kF32, {PartialShape({-1}), PartialShape({-1, 3}), PartialShape({4, -1})}) ==
        PartialShape({4, 3}));
  CHECK(Out("Select", kF32, {PartialShape({}), PartialShape({2}), PartialShape({2})}) == PartialShape({2}));
  ExpectShapeError("Select", kF32, {PartialShape({3}), PartialShape({4, 3}), PartialShape({4, 3})},
                   {"condition"});
  ExpectShapeError("Select", kF32, {PartialShape({2}), PartialShape({2}), PartialShape({3})}, {});

  const AttrMap addn = {{"N", int64_t{3}}, {"T", DType::kFloat32}};
  CHECK(Out("AddN", addn, {PartialShape({-1, 3}), PartialShape({2, -1}), PartialShape::Unknown()}) ==
        PartialShape({2, 3}));
  ExpectShapeError("AddN", addn, {PartialShape({2}), PartialShape({2}), PartialShape({3})}, {"input 2"});

  CHECK(Out("SqrtGrad", kF32, {PartialShape({-1, 2}), PartialShape({5, -1})}) == PartialShape({5, 2}));
  ExpectShapeError("RsqrtGrad", kF32, {PartialShape({2}), PartialShape({3})}, {"[2]", "[3]"});
}

TEST_CASE("BroadcastGradientArgs infers output lengths from constant shapes") {
  const Tensor s0 = Make<int32_t>({2}, {2, 1});
  const Tensor s1 = Make<int32_t>({3}, {4, 1, 3});
  ShapeResult r = InferShapes("BroadcastGradientArgs", {}, {PartialShape({2}), PartialShape({3})},
                              {&s0, &s1});
  REQUIRE(r.status.ok());
  CHECK(r.outputs[0] == PartialShape({2}));  // axes 0 and 2
  CHECK(r.outputs[1] == PartialShape({1}));  // axis 1
  r = InferShapes("BroadcastGradientArgs", {}, {PartialShape({-1}), PartialShape({3})});
  REQUIRE(r.status.ok());
  CHECK(r.outputs[0] == PartialShape({-1}));
  ExpectShapeError("BroadcastGradientArgs", {}, {PartialShape({2, 2}), PartialShape({3})}, {"rank 1"});
}

}  // namespace
}  // namespace tfd
