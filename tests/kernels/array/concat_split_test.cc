// ConcatV2, Concat, Pack, Split, Unpack.
#include "tests/kernels/array/array_test_util.h"

namespace tfd::array_test {
namespace {

AttrMap ConcatAttrs(int64_t n, DType t) { return {{"N", n}, {"T", t}}; }

TEST_CASE("ConcatV2 joins along an axis, negative axes counting from the end") {
  const Tensor a = F64({1, 2, 3, 4}, {2, 2});
  const Tensor b = F64({5, 6}, {2, 1});
  const Tensor c = F64({7, 8}, {1, 2});
  CheckTensor(RunOne("ConcatV2", ConcatAttrs(2, DType::kFloat64), {a, b, I32({1}, {})}),
              DType::kFloat64, {2, 3}, {1, 2, 5, 3, 4, 6});
  CheckTensor(RunOne("ConcatV2", ConcatAttrs(2, DType::kFloat64), {a, b, I32({-1}, {})}),
              DType::kFloat64, {2, 3}, {1, 2, 5, 3, 4, 6});
  CheckTensor(RunOne("ConcatV2", {{"N", int64_t{3}}, {"T", DType::kFloat64},
                                  {"Tidx", DType::kInt64}},
                     {a, c, c, I64({-2}, {})}),
              DType::kFloat64, {4, 2}, {1, 2, 3, 4, 7, 8, 7, 8});
  // An empty piece contributes nothing; all-empty gives empty.
  CheckTensor(RunOne("ConcatV2", ConcatAttrs(2, DType::kFloat64), {a, Iota({2, 0}), I32({1}, {})}),
              DType::kFloat64, {2, 2}, {1, 2, 3, 4});
  CheckTensor(RunOne("ConcatV2", ConcatAttrs(2, DType::kFloat64),
                     {Iota({0, 3}), Iota({0, 3}), I32({0}, {})}),
              DType::kFloat64, {0, 3}, {});
  Tensor s = RunOne("ConcatV2", ConcatAttrs(2, DType::kString),
                    {Str({"a", "b"}, {2}), Str({"c"}, {1}), I32({0}, {})});
  REQUIRE(s.shape() == TensorShape({3}));
  CHECK(s.data<std::string>()[2] == "c");
}

TEST_CASE("Concat takes TensorFlow 1's order: concat_dim first") {
  CheckTensor(RunOne("Concat", ConcatAttrs(2, DType::kInt32),
                     {I32({1}, {}), I32({1, 2}, {1, 2}), I32({3}, {1, 1})}),
              DType::kInt32, {1, 3}, {1, 2, 3});
}

TEST_CASE("ConcatV2 refuses mismatched ranks and dims, scalars and bad axes") {
  const AttrMap attrs = ConcatAttrs(2, DType::kFloat64);
  CheckInvalid(Run("ConcatV2", attrs, {Iota({2, 2}), Iota({4}), I32({0}, {})}).status(),
               "input 1 has rank 1 (shape [4]) but input 0 has rank 2");
  CheckInvalid(Run("ConcatV2", attrs, {Iota({2, 2}), Iota({3, 2}), I32({1}, {})}).status(),
               "dimension 0 must match");
  CheckInvalid(Run("ConcatV2", attrs, {F64({1}, {}), F64({2}, {}), I32({0}, {})}).status(),
               "cannot concatenate scalars");
  CheckInvalid(Run("ConcatV2", attrs, {Iota({2, 2}), Iota({2, 2}), I32({2}, {})}).status(),
               "axis 2 is out of range");
}

TEST_CASE("ConcatV2's shape function") {
  const AttrMap attrs = ConcatAttrs(2, DType::kFloat32);
  const PartialShape scalar(std::vector<int64_t>{});
  CHECK(InferOne("ConcatV2", attrs, {PartialShape({2, 3}), PartialShape({-1, 4}), scalar},
                 {{2, I32({-1}, {})}}) == PartialShape({2, 7}));
  CHECK(InferOne("ConcatV2", attrs, {PartialShape({2, -1}), PartialShape({-1, 4}), scalar},
                 {{2, I32({1}, {})}}) == PartialShape({2, -1}));
  CHECK(InferOne("ConcatV2", attrs, {PartialShape({2, 3}), Unknown(), scalar},
                 {{2, I32({0}, {})}}) == PartialShape({-1, 3}));
  CHECK(InferOne("ConcatV2", attrs, {PartialShape({2, 3}), PartialShape({2, 4}), scalar}) ==
        PartialShape::UnknownOfRank(2));
  CHECK(InferOne("ConcatV2", attrs, {Unknown(), Unknown(), scalar}) == Unknown());
  CheckInvalid(InferShapes("ConcatV2", attrs, {PartialShape({2, 3}), PartialShape({3}), scalar})
                   .status(), "ranks must match");
  CheckInvalid(InferShapes("ConcatV2", attrs, {PartialShape({2, 3}), PartialShape({3, 3}), scalar},
                           {{2, I32({1}, {})}}).status(), "differs in dimension 0");
  CHECK(InferOne("Concat", attrs, {scalar, PartialShape({2, 3}), PartialShape({2, 3})},
                 {{0, I32({0}, {})}}) == PartialShape({4, 3}));
}

TEST_CASE("Pack stacks along a new axis") {
  const Tensor a = F64({1, 2}, {2}), b = F64({3, 4}, {2}), c = F64({5, 6}, {2});
  CheckTensor(RunOne("Pack", {{"N", int64_t{3}}, {"T", DType::kFloat64}}, {a, b, c}),
              DType::kFloat64, {3, 2}, {1, 2, 3, 4, 5, 6});
  CheckTensor(RunOne("Pack", {{"N", int64_t{3}}, {"T", DType::kFloat64}, {"axis", int64_t{-1}}},
                     {a, b, c}),
              DType::kFloat64, {2, 3}, {1, 3, 5, 2, 4, 6});
  CheckTensor(RunOne("Pack", {{"N", int64_t{2}}, {"T", DType::kInt64}},
                     {I64({7}, {}), I64({8}, {})}),
              DType::kInt64, {2}, {7, 8});
  CheckTensor(RunOne("Pack", {{"N", int64_t{2}}, {"T", DType::kFloat64}, {"axis", int64_t{1}}},
                     {Iota({0}), Iota({0})}),
              DType::kFloat64, {0, 2}, {});

  CheckInvalid(Run("Pack", {{"N", int64_t{2}}, {"T", DType::kFloat64}}, {a, Iota({3})}).status(),
               "must have the same shape");
  CheckInvalid(Run("Pack", {{"N", int64_t{2}}, {"T", DType::kFloat64}, {"axis", int64_t{2}}},
                   {a, b}).status(), "axis 2 is out of range");
}

TEST_CASE("Pack's shape function") {
  const AttrMap attrs{{"N", int64_t{2}}, {"T", DType::kFloat32}, {"axis", int64_t{1}}};
  CHECK(InferOne("Pack", attrs, {PartialShape({-1, 3}), PartialShape({4, -1})}) ==
        PartialShape({4, 2, 3}));
  CHECK(InferOne("Pack", attrs, {Unknown(), Unknown()}) == Unknown());
  CheckInvalid(InferShapes("Pack", attrs, {PartialShape({2}), PartialShape({3})}).status(),
               "same shape");
}

TEST_CASE("Split cuts equal pieces; along dimension 0 they are views") {
  const Tensor x = Iota({4, 6});
  auto pieces = Run("Split", {{"num_split", int64_t{3}}, {"T", DType::kFloat64}},
                    {I32({1}, {}), x});
  REQUIRE(pieces.ok());
  REQUIRE(pieces->size() == 3);
  for (int k = 0; k < 3; ++k) {
    std::vector<double> expected;  // row r of piece k holds x[r, 2k], x[r, 2k+1]
    for (int r = 0; r < 4; ++r) {
      expected.push_back(6 * r + 2 * k);
      expected.push_back(6 * r + 2 * k + 1);
    }
    CheckTensor((*pieces)[k], DType::kFloat64, {4, 2}, expected);
  }
  auto rows = Run("Split", {{"num_split", int64_t{2}}, {"T", DType::kFloat64}},
                  {I32({-2}, {}), x});
  REQUIRE(rows.ok());
  CheckTensor((*rows)[1], DType::kFloat64, {2, 6},
              {12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23});
  CHECK(SharesBuffer((*rows)[0], x));
  CHECK(SharesBuffer((*rows)[1], x));
  // Leading dims of size 1 keep the pieces contiguous too.
  auto inner = Run("Split", {{"num_split", int64_t{2}}, {"T", DType::kFloat64}},
                   {I32({1}, {}), Iota({1, 4})});
  REQUIRE(inner.ok());
  CheckTensor((*inner)[1], DType::kFloat64, {1, 2}, {2, 3});
  auto empty = Run("Split", {{"num_split", int64_t{2}}, {"T", DType::kFloat64}},
                   {I32({1}, {}), Iota({0, 4})});
  REQUIRE(empty.ok());
  CHECK((*empty)[0].shape() == TensorShape({0, 2}));

  CheckInvalid(Run("Split", {{"num_split", int64_t{4}}, {"T", DType::kFloat64}},
                   {I32({1}, {}), x}).status(), "num_split 4 must evenly divide dimension 1");
  CheckInvalid(Run("Split", {{"num_split", int64_t{2}}, {"T", DType::kFloat64}},
                   {I32({2}, {}), x}).status(), "split_dim 2 is out of range");
  CheckInvalid(Run("Split", {{"num_split", int64_t{1}}, {"T", DType::kFloat64}},
                   {I32({0}, {}), F64({1}, {})}).status(), "out of range");
}

TEST_CASE("Split's shape function") {
  const AttrMap attrs{{"num_split", int64_t{2}}, {"T", DType::kFloat32}};
  const PartialShape scalar(std::vector<int64_t>{});
  auto out = InferShapes("Split", attrs, {scalar, PartialShape({-1, 6})}, {{0, I32({-1}, {})}});
  REQUIRE(out.ok());
  REQUIRE(out->size() == 2);
  CHECK((*out)[1] == PartialShape({-1, 3}));
  out = InferShapes("Split", attrs, {scalar, PartialShape({4, 6})});
  REQUIRE(out.ok());
  CHECK((*out)[0] == PartialShape::UnknownOfRank(2));
  CheckInvalid(InferShapes("Split", attrs, {scalar, PartialShape({5})}, {{0, I32({0}, {})}})
                   .status(), "must evenly divide");
}

TEST_CASE("Unpack yields the slices along an axis, which disappears") {
  const Tensor x = Iota({2, 3});
  auto rows = Run("Unpack", {{"num", int64_t{2}}, {"T", DType::kFloat64}}, {x});
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 2);
  CheckTensor((*rows)[0], DType::kFloat64, {3}, {0, 1, 2});
  CheckTensor((*rows)[1], DType::kFloat64, {3}, {3, 4, 5});
  CHECK(SharesBuffer((*rows)[1], x));
  auto cols = Run("Unpack", {{"num", int64_t{3}}, {"T", DType::kFloat64}, {"axis", int64_t{-1}}},
                  {x});
  REQUIRE(cols.ok());
  REQUIRE(cols->size() == 3);
  CheckTensor((*cols)[0], DType::kFloat64, {2}, {0, 3});
  CheckTensor((*cols)[2], DType::kFloat64, {2}, {2, 5});
  auto scalars = Run("Unpack", {{"num", int64_t{2}}, {"T", DType::kInt32}}, {I32({4, 5})});
  REQUIRE(scalars.ok());
  CheckTensor((*scalars)[1], DType::kInt32, {}, {5});

  CheckInvalid(Run("Unpack", {{"num", int64_t{3}}, {"T", DType::kFloat64}}, {x}).status(),
               "num is 3 but dimension 0 of value has size 2");
  CheckInvalid(Run("Unpack", {{"num", int64_t{1}}, {"T", DType::kFloat64}}, {F64({1}, {})})
                   .status(), "out of range");
}

TEST_CASE("Unpack's shape function") {
  auto out = InferShapes("Unpack",
                         {{"num", int64_t{3}}, {"T", DType::kFloat32}, {"axis", int64_t{1}}},
                         {PartialShape({-1, 3, 5})});
  REQUIRE(out.ok());
  REQUIRE(out->size() == 3);
  CHECK((*out)[2] == PartialShape({-1, 5}));
  CheckInvalid(InferShapes("Unpack", {{"num", int64_t{2}}, {"T", DType::kFloat32}},
                           {PartialShape({3, 5})}).status(), "num is 2");
  out = InferShapes("Unpack", {{"num", int64_t{2}}, {"T", DType::kFloat32}}, {Unknown()});
  REQUIRE(out.ok());
  CHECK((*out)[0] == Unknown());
}

}  // namespace
}  // namespace tfd::array_test
