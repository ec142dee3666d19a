// Const, Placeholder, PlaceholderWithDefault, Identity.
#include "tests/kernels/array/array_test_util.h"

namespace tfd::array_test {
namespace {

TEST_CASE("Const outputs its value without copying it") {
  const Tensor value = F64({1.5, -2, 3, 4, 5, 6}, {2, 3});
  Tensor out = RunOne("Const", {{"value", value}, {"dtype", DType::kFloat64}}, {});
  CheckTensor(out, DType::kFloat64, {2, 3}, {1.5, -2, 3, 4, 5, 6});
  CHECK(SharesBuffer(out, value));

  Tensor s = RunOne("Const", {{"value", Tensor::Scalar("hi")}, {"dtype", DType::kString}}, {});
  REQUIRE(s.dtype() == DType::kString);
  CHECK(s.rank() == 0);
  CHECK(s.scalar<std::string>() == "hi");

  Tensor empty = RunOne("Const", {{"value", I32({}, {0, 4})}, {"dtype", DType::kInt32}}, {});
  CheckTensor(empty, DType::kInt32, {0, 4}, {});
}

TEST_CASE("Const refuses a value whose dtype is not attr dtype") {
  auto out = Run("Const", {{"value", I32({1, 2})}, {"dtype", DType::kFloat32}}, {});
  CheckInvalid(out.status(), "dtype");
  auto shape = InferShapes("Const", {{"value", I32({1, 2})}, {"dtype", DType::kFloat32}}, {});
  CheckInvalid(shape.status(), "dtype");
}

TEST_CASE("Const's shape is exactly its value's") {
  CHECK(InferOne("Const", {{"value", Iota({2, 3})}, {"dtype", DType::kFloat64}}, {}) ==
        PartialShape({2, 3}));
  CHECK(InferOne("Const", {{"value", Tensor::Scalar(int64_t{7})}, {"dtype", DType::kInt64}},
                 {}) == PartialShape(std::vector<int64_t>{}));
}

TEST_CASE("an unfed Placeholder is INVALID_ARGUMENT naming the placeholder") {
  auto out = Run("Placeholder", {{"dtype", DType::kFloat32}, {"shape", PartialShape({-1, 3})}}, {});
  CheckInvalid(out.status(), "must feed a value for placeholder");
  CHECK(out.status().message().find("float32") != std::string::npos);
  CHECK(out.status().message().find("[?, 3]") != std::string::npos);
}

TEST_CASE("placeholders are stateful, so graph rewrites never merge or fold them") {
  CHECK(Ops().Find("Placeholder")->def.stateful);
  CHECK(Ops().Find("PlaceholderWithDefault")->def.stateful);
  CHECK_FALSE(Ops().Find("Const")->def.stateful);
}

TEST_CASE("Placeholder's shape is attr shape, unknown by default") {
  CHECK(InferOne("Placeholder", {{"dtype", DType::kFloat32}}, {}) == Unknown());
  CHECK(InferOne("Placeholder", {{"dtype", DType::kFloat32}, {"shape", PartialShape({-1, 3})}},
                 {}) == PartialShape({-1, 3}));
}

TEST_CASE("PlaceholderWithDefault passes its default through when unfed") {
  const Tensor dflt = I64({4, 5, 6}, {1, 3});
  Tensor out = RunOne("PlaceholderWithDefault",
                      {{"dtype", DType::kInt64}, {"shape", PartialShape({-1, 3})}}, {dflt});
  CheckTensor(out, DType::kInt64, {1, 3}, {4, 5, 6});
  CHECK(SharesBuffer(out, dflt));

  auto bad = Run("PlaceholderWithDefault",
                 {{"dtype", DType::kInt64}, {"shape", PartialShape({-1, 2})}}, {dflt});
  CheckInvalid(bad.status(), "does not match the placeholder's shape [?, 2]");
}

TEST_CASE("PlaceholderWithDefault's shape is the declared one, which the default must fit") {
  const AttrMap attrs{{"dtype", DType::kFloat32}, {"shape", PartialShape({-1, 3})}};
  // The output may be fed with any batch size, so it is not the default's [2, 3].
  CHECK(InferOne("PlaceholderWithDefault", attrs, {PartialShape({2, 3})}) == PartialShape({-1, 3}));
  CHECK(InferOne("PlaceholderWithDefault", attrs, {Unknown()}) == PartialShape({-1, 3}));
  CheckInvalid(InferShapes("PlaceholderWithDefault", attrs, {PartialShape({2, 4})}).status(),
               "incompatible");
}

TEST_CASE("Identity forwards any dtype and rank without copying") {
  const Tensor x = Str({"a", "b", "c"}, {3, 1});
  Tensor out = RunOne("Identity", {{"T", DType::kString}}, {x});
  CHECK(SharesBuffer(out, x));
  CHECK(out.shape() == TensorShape({3, 1}));
  CHECK(out.data<std::string>()[2] == "c");

  Tensor scalar = RunOne("Identity", {{"T", DType::kBool}}, {Tensor::Scalar(true)});
  CheckTensor(scalar, DType::kBool, {}, {1});
  CHECK(InferOne("Identity", {{"T", DType::kFloat32}}, {PartialShape({-1, 7})}) ==
        PartialShape({-1, 7}));
}

}  // namespace
}  // namespace tfd::array_test
