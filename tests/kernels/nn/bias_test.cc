// BiasAdd, BiasAddGrad (against finite differences of BiasAdd) and InTopK.
#include <cmath>
#include <limits>

#include "tests/kernels/nn/nn_test_util.h"

namespace tfd::testing::nn {
namespace {

TEST_CASE("BiasAdd adds the bias along the last dimension") {
  for (DType t : {DType::kFloat32, DType::kFloat64}) {
    INFO(DTypeName(t));
    auto out = MustRun("BiasAdd", TypeAttr(t),
                       {Make(t, {1, 2, 3, 4, 5, 6}, {2, 3}), Make(t, {10, 20, 30}, {3})});
    CheckClose(out[0], TensorShape({2, 3}), {11, 22, 33, 14, 25, 36}, 0);

    std::vector<double> x = Spread(12, -1, 1);
    std::vector<double> want = x;
    for (size_t i = 0; i < want.size(); ++i) want[i] += (i % 2 == 0) ? 0.5 : -2.0;
    auto rank3 = MustRun("BiasAdd", TypeAttr(t), {Make(t, x, {2, 3, 2}), Make(t, {0.5, -2}, {2})});
    CheckClose(rank3[0], TensorShape({2, 3, 2}), want, Tolerance(t), Tolerance(t));

    auto empty = MustRun("BiasAdd", TypeAttr(t), {Make(t, {}, {0, 3}), Make(t, {1, 2, 3}, {3})});
    CHECK(empty[0].shape() == TensorShape({0, 3}));
    auto no_channels = MustRun("BiasAdd", TypeAttr(t), {Make(t, {}, {4, 0}), Make(t, {}, {0})});
    CHECK(no_channels[0].shape() == TensorShape({4, 0}));
  }
}

TEST_CASE("BiasAdd refuses NCHW, naming it unsupported, at graph and kernel time") {
  AttrMap attrs = {{"T", DType::kFloat32}, {"data_format", std::string("NCHW")}};
  auto out = RunOp(Registry(), "BiasAdd", attrs,
                   {Make(DType::kFloat32, {1, 2}, {1, 2}), Make(DType::kFloat32, {1, 2}, {2})});
  REQUIRE(out.status().code() == Code::kInvalidArgument);
  CHECK(out.status().message().find("NCHW") != std::string::npos);
  CHECK(out.status().message().find("unsupported") != std::string::npos);

  const OpRegistration* reg = Registry().Find("BiasAdd");
  REQUIRE(reg != nullptr);
  InferenceContext c(attrs, {PartialShape({1, 2}), PartialShape({2})},
                     {DType::kFloat32, DType::kFloat32}, {nullptr, nullptr}, 1);
  Status s = reg->shape_fn(c);
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK(s.message().find("NCHW") != std::string::npos);

  auto grad = RunOp(Registry(), "BiasAddGrad", attrs, {Make(DType::kFloat32, {1, 2}, {1, 2})});
  CHECK(grad.status().code() == Code::kInvalidArgument);
}

TEST_CASE("BiasAdd refuses a bias that does not fit") {
  auto wrong_length = RunOp(Registry(), "BiasAdd", TypeAttr(DType::kFloat64),
                            {Doubles({1, 2, 3, 4, 5, 6}, {2, 3}), Doubles({1, 2}, {2})});
  REQUIRE(wrong_length.status().code() == Code::kInvalidArgument);
  CHECK(wrong_length.status().message().find("bias has 2 elements") != std::string::npos);
  auto vector_value = RunOp(Registry(), "BiasAdd", TypeAttr(DType::kFloat64),
                            {Doubles({1, 2}, {2}), Doubles({1, 2}, {2})});
  REQUIRE(vector_value.status().code() == Code::kInvalidArgument);
  CHECK(vector_value.status().message().find("rank >= 2") != std::string::npos);
  auto matrix_bias = RunOp(Registry(), "BiasAdd", TypeAttr(DType::kFloat64),
                           {Doubles({1, 2}, {1, 2}), Doubles({1, 2}, {1, 2})});
  CHECK(matrix_bias.status().code() == Code::kInvalidArgument);

  const OpRegistration* reg = Registry().Find("BiasAdd");
  AttrMap attrs = TypeAttr(DType::kFloat32);
  InferenceContext infer(attrs, {PartialShape({-1, -1}), PartialShape({7})},
                         {DType::kFloat32, DType::kFloat32}, {nullptr, nullptr}, 1);
  REQUIRE(reg->shape_fn(infer).ok());
  CHECK(infer.output(0) == PartialShape({-1, 7}));
  InferenceContext clash(attrs, {PartialShape({-1, 3}), PartialShape({7})},
                         {DType::kFloat32, DType::kFloat32}, {nullptr, nullptr}, 1);
  CHECK(reg->shape_fn(clash).code() == Code::kInvalidArgument);
}

TEST_CASE("BiasAddGrad sums over all but the last dimension") {
  for (DType t : {DType::kFloat32, DType::kFloat64}) {
    INFO(DTypeName(t));
    auto out = MustRun("BiasAddGrad", TypeAttr(t), {Make(t, {1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2})});
    CheckClose(out[0], TensorShape({2}), {1 + 3 + 5 + 7, 2 + 4 + 6 + 8}, 0);
    auto empty = MustRun("BiasAddGrad", TypeAttr(t), {Make(t, {}, {0, 3})});
    CheckClose(empty[0], TensorShape({3}), {0, 0, 0}, 0);
  }
  auto vector = RunOp(Registry(), "BiasAddGrad", TypeAttr(DType::kFloat64), {Doubles({1}, {1})});
  CHECK(vector.status().code() == Code::kInvalidArgument);
}

TEST_CASE("BiasAddGrad matches finite differences of BiasAdd with respect to bias") {
  const TensorShape shape({3, 2, 4});
  const Tensor value = Doubles(Spread(24, -3, 3, 11), shape);
  const Tensor bias = Doubles({0.5, -1, 2, 0.25}, {4});
  const Tensor dy = Doubles(Spread(24, -1, 1, 12), shape);
  auto analytic = MustRun("BiasAddGrad", TypeAttr(DType::kFloat64), {dy});
  Status s = CheckGradient(OpFunction("BiasAdd", TypeAttr(DType::kFloat64)), {value, bias}, 1, dy,
                           analytic[0]);
  INFO(s.message());
  CHECK(s.ok());
}

TEST_CASE("InTopK says whether the target is among the k best, ties included") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor predictions =
      Tensor::FromVector<float>({0.1f, 0.8f, 0.1f,  // target 1 is the best
                                 0.3f, 0.3f, 0.4f,  // target 0 ties for second
                                 0.5f, 0.5f, 0.1f,  // target 1 ties for first
                                 0.9f, 0.2f, 0.7f,  // target 3 is out of range
                                 0.1f, nan, 0.2f},  // a NaN makes the row false
                                {5, 3});
  const Tensor targets = Tensor::FromVector<int32_t>({1, 0, 1, 3, 2});
  auto k1 = MustRun("InTopK", {{"k", int64_t{1}}}, {predictions, targets});
  const std::vector<bool> want1 = {true, false, true, false, false};
  auto k2 = MustRun("InTopK", {{"k", int64_t{2}}, {"T", DType::kInt32}}, {predictions, targets});
  const std::vector<bool> want2 = {true, true, true, false, false};
  REQUIRE(k1[0].shape() == TensorShape({5}));
  for (int i = 0; i < 5; ++i) {
    INFO("row " << i);
    CHECK(k1[0].data<bool>()[i] == want1[i]);
    CHECK(k2[0].data<bool>()[i] == want2[i]);
  }
  auto v2 = MustRun(
      "InTopKV2", {{"T", DType::kInt64}},
      {predictions, Tensor::FromVector<int64_t>({1, 0, 1, 3, 2}), Tensor::Scalar<int64_t>(2)});
  for (int i = 0; i < 5; ++i) CHECK(v2[0].data<bool>()[i] == want2[i]);

  auto mismatch = RunOp(Registry(), "InTopK", {{"k", int64_t{1}}},
                        {predictions, Tensor::FromVector<int32_t>({0, 1})});
  CHECK(mismatch.status().code() == Code::kInvalidArgument);
}

}  // namespace
}  // namespace tfd::testing::nn
