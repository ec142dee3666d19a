// Shape, Size, Rank, Reshape, ExpandDims, Squeeze.
#include "tests/kernels/array/array_test_util.h"

namespace tfd::array_test {
namespace {

TEST_CASE("Shape, Size and Rank describe the input") {
  const Tensor x = Iota({2, 0, 3});
  CheckTensor(RunOne("Shape", {{"T", DType::kFloat64}}, {x}), DType::kInt32, {3}, {2, 0, 3});
  CheckTensor(RunOne("Shape", {{"T", DType::kFloat64}, {"out_type", DType::kInt64}}, {x}),
              DType::kInt64, {3}, {2, 0, 3});
  CheckTensor(RunOne("Size", {{"T", DType::kFloat64}}, {x}), DType::kInt32, {}, {0});
  CheckTensor(RunOne("Rank", {{"T", DType::kFloat64}}, {x}), DType::kInt32, {}, {3});

  const Tensor scalar = Tensor::Scalar("s");
  CheckTensor(RunOne("Shape", {{"T", DType::kString}}, {scalar}), DType::kInt32, {0}, {});
  CheckTensor(RunOne("Size", {{"T", DType::kString}, {"out_type", DType::kInt64}}, {scalar}),
              DType::kInt64, {}, {1});
  CheckTensor(RunOne("Rank", {{"T", DType::kString}}, {scalar}), DType::kInt32, {}, {0});
}

TEST_CASE("Shape's shape is [rank]; Size and Rank are scalars") {
  CHECK(InferOne("Shape", {{"T", DType::kFloat32}}, {PartialShape({-1, 4})}) == PartialShape({2}));
  CHECK(InferOne("Shape", {{"T", DType::kFloat32}}, {Unknown()}) == PartialShape({-1}));
  CHECK(InferOne("Size", {{"T", DType::kFloat32}}, {Unknown()}) ==
        PartialShape(std::vector<int64_t>{}));
  CHECK(InferOne("Rank", {{"T", DType::kFloat32}}, {Unknown()}) ==
        PartialShape(std::vector<int64_t>{}));
}

TEST_CASE("Reshape keeps row-major order, infers one -1 and shares the buffer") {
  const Tensor x = Iota({2, 3});
  Tensor out = RunOne("Reshape", {{"T", DType::kFloat64}}, {x, I32({3, -1})});
  CheckTensor(out, DType::kFloat64, {3, 2}, {0, 1, 2, 3, 4, 5});
  CHECK(SharesBuffer(out, x));

  Tensor flat = RunOne("Reshape", {{"T", DType::kFloat64}, {"Tshape", DType::kInt64}},
                       {x, I64({-1})});
  CHECK(flat.shape() == TensorShape({6}));
  // To and from rank 0.
  Tensor scalar = RunOne("Reshape", {{"T", DType::kFloat64}}, {F64({7}, {1, 1}), I32({})});
  CheckTensor(scalar, DType::kFloat64, {}, {7});
  Tensor back = RunOne("Reshape", {{"T", DType::kFloat64}}, {scalar, I32({1, -1, 1})});
  CHECK(back.shape() == TensorShape({1, 1, 1}));
  // Empty tensors reshape among empty shapes.
  Tensor empty = RunOne("Reshape", {{"T", DType::kFloat64}}, {Iota({0, 3}), I32({3, 0, 5})});
  CHECK(empty.shape() == TensorShape({3, 0, 5}));
}

TEST_CASE("Reshape refuses sizes that do not match") {
  const Tensor x = Iota({2, 3});
  CheckInvalid(Run("Reshape", {{"T", DType::kFloat64}}, {x, I32({4, 2})}).status(),
               "cannot reshape a tensor with 6 elements to shape [4, 2] (8 elements)");
  CheckInvalid(Run("Reshape", {{"T", DType::kFloat64}}, {x, I32({4, -1})}).status(),
               "6 is not a multiple of 4");
  CheckInvalid(Run("Reshape", {{"T", DType::kFloat64}}, {x, I32({-1, -1})}).status(),
               "only one size");
  CheckInvalid(Run("Reshape", {{"T", DType::kFloat64}}, {x, I32({-2, -3})}).status(),
               "non-negative");
  CheckInvalid(Run("Reshape", {{"T", DType::kFloat64}}, {x, I32({6}, {1, 1})}).status(),
               "shape must be a vector");
  CheckInvalid(Run("Reshape", {{"T", DType::kFloat64}}, {Iota({0}), I32({0, -1})}).status(),
               "cannot infer the -1 size");
}

TEST_CASE("Reshape's shape function resolves -1 from a known input") {
  const AttrMap attrs{{"T", DType::kFloat32}};
  CHECK(InferOne("Reshape", attrs, {PartialShape({2, 6}), PartialShape({3})},
                 {{1, I32({-1, 2, 3})}}) == PartialShape({2, 2, 3}));
  // Input size unknown: the -1 stays unknown.
  CHECK(InferOne("Reshape", attrs, {PartialShape({-1, 6}), PartialShape({2})},
                 {{1, I32({-1, 3})}}) == PartialShape({-1, 3}));
  // Shape value unknown: only the rank, from the length of the shape input.
  CHECK(InferOne("Reshape", attrs, {PartialShape({2, 6}), PartialShape({4})}) ==
        PartialShape::UnknownOfRank(4));
  CHECK(InferOne("Reshape", attrs, {PartialShape({2, 6}), PartialShape({-1})}) == Unknown());
  CheckInvalid(InferShapes("Reshape", attrs, {PartialShape({2, 6}), PartialShape({2})},
                           {{1, I32({5, 5})}}).status(), "12 elements");
  CheckInvalid(InferShapes("Reshape", attrs, {PartialShape({2, 6}), PartialShape({2, 2})}).status(),
               "input 1 must have rank 1");
}

TEST_CASE("ExpandDims inserts a 1 at dim, counting negative dims from the end") {
  const Tensor x = Iota({2, 3});
  Tensor front = RunOne("ExpandDims", {{"T", DType::kFloat64}}, {x, Tensor::Scalar(int32_t{0})});
  CheckTensor(front, DType::kFloat64, {1, 2, 3}, {0, 1, 2, 3, 4, 5});
  CHECK(SharesBuffer(front, x));
  Tensor back = RunOne("ExpandDims", {{"T", DType::kFloat64}, {"Tdim", DType::kInt64}},
                       {x, Tensor::Scalar(int64_t{-1})});
  CHECK(back.shape() == TensorShape({2, 3, 1}));
  Tensor mid = RunOne("ExpandDims", {{"T", DType::kFloat64}}, {x, Tensor::Scalar(int32_t{-2})});
  CHECK(mid.shape() == TensorShape({2, 1, 3}));
  Tensor from_scalar = RunOne("ExpandDims", {{"T", DType::kFloat64}},
                              {F64({9}, {}), Tensor::Scalar(int32_t{0})});
  CheckTensor(from_scalar, DType::kFloat64, {1}, {9});

  CheckInvalid(Run("ExpandDims", {{"T", DType::kFloat64}}, {x, Tensor::Scalar(int32_t{3})})
                   .status(),
               "dim 3 is out of range");
  CheckInvalid(Run("ExpandDims", {{"T", DType::kFloat64}}, {x, Tensor::Scalar(int32_t{-4})})
                   .status(),
               "expected a value in [-3, 2]");
}

TEST_CASE("ExpandDims' shape function") {
  const AttrMap attrs{{"T", DType::kFloat32}};
  const PartialShape scalar(std::vector<int64_t>{});
  CHECK(InferOne("ExpandDims", attrs, {PartialShape({-1, 3}), scalar},
                 {{1, Tensor::Scalar(int32_t{-1})}}) == PartialShape({-1, 3, 1}));
  CHECK(InferOne("ExpandDims", attrs, {PartialShape({-1, 3}), scalar}) ==
        PartialShape::UnknownOfRank(3));
  CHECK(InferOne("ExpandDims", attrs, {Unknown(), scalar},
                 {{1, Tensor::Scalar(int32_t{0})}}) == Unknown());
  CheckInvalid(InferShapes("ExpandDims", attrs, {PartialShape({4}), Unknown()},
                           {{1, Tensor::Scalar(int32_t{2})}}).status(), "out of range");
}

TEST_CASE("Squeeze drops size-1 dims: all of them, or those named") {
  const Tensor x = Iota({1, 2, 1, 3, 1});
  Tensor all = RunOne("Squeeze", {{"T", DType::kFloat64}}, {x});
  CheckTensor(all, DType::kFloat64, {2, 3}, {0, 1, 2, 3, 4, 5});
  CHECK(SharesBuffer(all, x));
  Tensor some = RunOne("Squeeze", {{"T", DType::kFloat64},
                                   {"squeeze_dims", std::vector<int64_t>{0, -1}}}, {x});
  CHECK(some.shape() == TensorShape({2, 1, 3}));
  Tensor to_scalar = RunOne("Squeeze", {{"T", DType::kFloat64}}, {F64({5}, {1, 1})});
  CheckTensor(to_scalar, DType::kFloat64, {}, {5});

  CheckInvalid(Run("Squeeze", {{"T", DType::kFloat64}, {"squeeze_dims", std::vector<int64_t>{1}}},
                   {x}).status(), "cannot squeeze dim 1: expected size 1, got 2");
  CheckInvalid(Run("Squeeze", {{"T", DType::kFloat64}, {"squeeze_dims", std::vector<int64_t>{5}}},
                   {x}).status(), "out of range");
}

TEST_CASE("Squeeze's shape function") {
  CHECK(InferOne("Squeeze", {{"T", DType::kFloat32}}, {PartialShape({1, 3, 1})}) ==
        PartialShape({3}));
  // An unknown dim might be 1: with no dims named the rank is unknown.
  CHECK(InferOne("Squeeze", {{"T", DType::kFloat32}}, {PartialShape({1, -1})}) == Unknown());
  CHECK(InferOne("Squeeze", {{"T", DType::kFloat32}, {"squeeze_dims", std::vector<int64_t>{0}}},
                 {PartialShape({1, -1})}) == PartialShape({-1}));
  CHECK(InferOne("Squeeze", {{"T", DType::kFloat32}, {"squeeze_dims", std::vector<int64_t>{-1}}},
                 {PartialShape({4, -1})}) == PartialShape({4}));
  CheckInvalid(InferShapes("Squeeze", {{"T", DType::kFloat32},
                                       {"squeeze_dims", std::vector<int64_t>{0}}},
                           {PartialShape({4, 1})}).status(), "expected size 1, got 4");
}

}  // namespace
}  // namespace tfd::array_test
