// Transpose, Tile, Cast.
#include <cmath>
#include <limits>

#include "tests/kernels/array/array_test_util.h"

namespace tfd::array_test {
namespace {

// Multi-index of flat position pos in dims, and back.
std::vector<int64_t> Unflatten(int64_t pos, const std::vector<int64_t>& dims) {
  std::vector<int64_t> index(dims.size());
  for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
    index[d] = pos % dims[d];
    pos /= dims[d];
  }
  return index;
}
int64_t Flatten(const std::vector<int64_t>& index, const std::vector<int64_t>& dims) {
  int64_t pos = 0;
  for (size_t d = 0; d < dims.size(); ++d) pos = pos * dims[d] + index[d];
  return pos;
}

// y[i] = x[j] where j[perm[d]] = i[d], for Iota(dims) as x.
std::vector<double> TransposeOfIota(const std::vector<int64_t>& dims,
                                    const std::vector<int64_t>& perm) {
  std::vector<int64_t> out_dims(dims.size());
  int64_t total = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    out_dims[d] = dims[perm[d]];
    total *= dims[d];
  }
  std::vector<double> out;
  for (int64_t pos = 0; pos < total; ++pos) {
    const std::vector<int64_t> i = Unflatten(pos, out_dims);
    std::vector<int64_t> j(dims.size());
    for (size_t d = 0; d < dims.size(); ++d) j[perm[d]] = i[d];
    out.push_back(static_cast<double>(Flatten(j, dims)));
  }
  return out;
}

TEST_CASE("Transpose permutes dimensions") {
  const AttrMap attrs{{"T", DType::kFloat64}};
  CheckTensor(RunOne("Transpose", attrs, {Iota({2, 3}), I32({1, 0})}), DType::kFloat64, {3, 2},
              {0, 3, 1, 4, 2, 5});
  for (const std::vector<int64_t>& perm : std::vector<std::vector<int64_t>>{
           {2, 0, 1}, {1, 2, 0}, {0, 2, 1}, {2, 1, 0}}) {
    INFO("perm " << PartialShape(perm).ToString());
    Tensor y = RunOne("Transpose", {{"T", DType::kFloat64}, {"Tperm", DType::kInt64}},
                      {Iota({2, 3, 4}), I64(perm)});
    const std::vector<int64_t> dims = {2, 3, 4};
    CheckTensor(y, DType::kFloat64, TensorShape({dims[perm[0]], dims[perm[1]], dims[perm[2]]}),
                TransposeOfIota(dims, perm));
  }
  Tensor s = RunOne("Transpose", {{"T", DType::kString}},
                    {Str({"a", "b", "c", "d", "e", "f"}, {3, 2}), I32({1, 0})});
  REQUIRE(s.shape() == TensorShape({2, 3}));
  CHECK(s.data<std::string>()[1] == "c");
}

TEST_CASE("Transpose returns a view when the element order does not change") {
  const AttrMap attrs{{"T", DType::kFloat64}};
  const Tensor x = Iota({2, 3});
  Tensor same = RunOne("Transpose", attrs, {x, I32({0, 1})});
  CHECK(SharesBuffer(same, x));
  const Tensor column = Iota({1, 4, 1});
  Tensor moved = RunOne("Transpose", attrs, {column, I32({2, 1, 0})});
  CheckTensor(moved, DType::kFloat64, {1, 4, 1}, {0, 1, 2, 3});
  CHECK(SharesBuffer(moved, column));
  CheckTensor(RunOne("Transpose", attrs, {F64({4}, {}), I32({})}), DType::kFloat64, {}, {4});
  CheckTensor(RunOne("Transpose", attrs, {Iota({0, 3}), I32({1, 0})}), DType::kFloat64, {3, 0},
              {});
}

TEST_CASE("Transpose refuses perms that are not permutations of the right length") {
  const AttrMap attrs{{"T", DType::kFloat64}};
  const Tensor x = Iota({2, 3});
  CheckInvalid(Run("Transpose", attrs, {x, I32({0})}).status(), "perm must have length 2");
  CheckInvalid(Run("Transpose", attrs, {x, I32({1, 1})}).status(), "1 appears twice");
  CheckInvalid(Run("Transpose", attrs, {x, I32({0, 2})}).status(), "perm[1] = 2 is not in [0, 2)");
}

TEST_CASE("Transpose's shape function") {
  const AttrMap attrs{{"T", DType::kFloat32}};
  CHECK(InferOne("Transpose", attrs, {PartialShape({2, -1, 4}), PartialShape({3})},
                 {{1, I32({2, 0, 1})}}) == PartialShape({4, 2, -1}));
  CHECK(InferOne("Transpose", attrs, {PartialShape({2, -1, 4}), PartialShape({3})}) ==
        PartialShape::UnknownOfRank(3));
  CHECK(InferOne("Transpose", attrs, {Unknown(), PartialShape({2})}, {{1, I32({1, 0})}}) ==
        PartialShape({-1, -1}));
  CHECK(InferOne("Transpose", attrs, {Unknown(), Unknown()}) == Unknown());
  CheckInvalid(InferShapes("Transpose", attrs, {PartialShape({2, 3}), PartialShape({3})}).status(),
               "must have length 2");
  CheckInvalid(InferShapes("Transpose", attrs, {PartialShape({2, 3}), PartialShape({2})},
                           {{1, I32({0, 0})}}).status(), "not a permutation");
}

// out[i] = x[i mod dims], for Iota(dims) as x.
std::vector<double> TileOfIota(const std::vector<int64_t>& dims,
                               const std::vector<int64_t>& multiples) {
  std::vector<int64_t> out_dims(dims.size());
  int64_t total = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    out_dims[d] = dims[d] * multiples[d];
    total *= out_dims[d];
  }
  std::vector<double> out;
  for (int64_t pos = 0; pos < total; ++pos) {
    std::vector<int64_t> i = Unflatten(pos, out_dims);
    for (size_t d = 0; d < dims.size(); ++d) i[d] %= dims[d];
    out.push_back(static_cast<double>(Flatten(i, dims)));
  }
  return out;
}

TEST_CASE("Tile repeats along each dimension") {
  const AttrMap attrs{{"T", DType::kFloat64}};
  CheckTensor(RunOne("Tile", attrs, {Iota({2, 3}), I32({2, 2})}), DType::kFloat64, {4, 6},
              TileOfIota({2, 3}, {2, 2}));
  CheckTensor(RunOne("Tile", {{"T", DType::kFloat64}, {"Tmultiples", DType::kInt64}},
                     {Iota({2, 1, 3}), I64({1, 3, 2})}),
              DType::kFloat64, {2, 3, 6}, TileOfIota({2, 1, 3}, {1, 3, 2}));
  CheckTensor(RunOne("Tile", attrs, {Iota({3}), I32({3})}), DType::kFloat64, {9},
              {0, 1, 2, 0, 1, 2, 0, 1, 2});
  CheckTensor(RunOne("Tile", attrs, {Iota({2, 3}), I32({0, 2})}), DType::kFloat64, {0, 6}, {});
  CheckTensor(RunOne("Tile", attrs, {F64({8}, {}), I32({})}), DType::kFloat64, {}, {8});
  Tensor s = RunOne("Tile", {{"T", DType::kString}}, {Str({"p", "q"}, {2}), I32({2})});
  REQUIRE(s.num_elements() == 4);
  CHECK(s.data<std::string>()[3] == "q");

  CheckInvalid(Run("Tile", attrs, {Iota({2, 3}), I32({2})}).status(),
               "multiples must have length 2");
  CheckInvalid(Run("Tile", attrs, {Iota({2, 3}), I32({1, -1})}).status(),
               "multiples[1] must be non-negative");
}

TEST_CASE("Tile's shape function") {
  const AttrMap attrs{{"T", DType::kFloat32}};
  CHECK(InferOne("Tile", attrs, {PartialShape({2, -1, 3}), PartialShape({3})},
                 {{1, I32({2, 2, 0})}}) == PartialShape({4, -1, 0}));
  CHECK(InferOne("Tile", attrs, {Unknown(), PartialShape({2})}) == PartialShape::UnknownOfRank(2));
  CheckInvalid(InferShapes("Tile", attrs, {PartialShape({2}), PartialShape({1})},
                           {{1, I32({-3})}}).status(), "non-negative");
  CheckInvalid(InferShapes("Tile", attrs, {PartialShape({1 << 20}), PartialShape({1})},
                           {{1, I64({int64_t{1} << 62})}}).status(), "exceeds");
}

AttrMap CastAttrs(DType from, DType to) { return {{"SrcT", from}, {"DstT", to}}; }

TEST_CASE("Cast converts between numeric dtypes and bool") {
  const Tensor f = F64({-2.7, -0.5, 0, 0.5, 3.9, 255.5}, {2, 3});
  CheckTensor(RunOne("Cast", CastAttrs(DType::kFloat64, DType::kInt32), {f}), DType::kInt32,
              {2, 3}, {-2, 0, 0, 0, 3, 255});
  CheckTensor(RunOne("Cast", CastAttrs(DType::kFloat64, DType::kBool), {f}), DType::kBool, {2, 3},
              {1, 1, 0, 1, 1, 1});
  CheckTensor(RunOne("Cast", CastAttrs(DType::kFloat64, DType::kFloat32), {f}), DType::kFloat32,
              {2, 3},
              {static_cast<float>(-2.7), -0.5, 0, 0.5, static_cast<float>(3.9), 255.5});
  CheckTensor(RunOne("Cast", CastAttrs(DType::kBool, DType::kFloat64),
                     {Tensor::FromVector<bool>({true, false})}),
              DType::kFloat64, {2}, {1, 0});
  CheckTensor(RunOne("Cast", CastAttrs(DType::kInt32, DType::kInt64), {I32({-7}, {})}),
              DType::kInt64, {}, {-7});
  CheckTensor(RunOne("Cast", CastAttrs(DType::kUInt8, DType::kFloat32),
                     {Tensor::FromVector<uint8_t>({0, 200})}),
              DType::kFloat32, {2}, {0, 200});
  CheckTensor(RunOne("Cast", CastAttrs(DType::kInt32, DType::kFloat32), {I32({}, {0, 2})}),
              DType::kFloat32, {0, 2}, {});
  // Same dtype: the input itself.
  const Tensor i = I64({1, 2});
  CHECK(SharesBuffer(RunOne("Cast", CastAttrs(DType::kInt64, DType::kInt64), {i}), i));
}

TEST_CASE("Cast wraps narrowed integers and saturates out-of-range floats") {
  CheckTensor(RunOne("Cast", CastAttrs(DType::kInt32, DType::kUInt8), {I32({256 + 7, -1})}),
              DType::kUInt8, {2}, {7, 255});
  CheckTensor(RunOne("Cast", CastAttrs(DType::kInt64, DType::kInt32),
                     {I64({(int64_t{1} << 32) + 5})}),
              DType::kInt32, {1}, {5});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CheckTensor(RunOne("Cast", CastAttrs(DType::kFloat64, DType::kInt32),
                     {F64({1e12, -1e12, nan}, {3})}),
              DType::kInt32, {3},
              {std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min(), 0});
  CheckTensor(RunOne("Cast", CastAttrs(DType::kFloat32, DType::kUInt8), {F32({-3, 300}, {2})}),
              DType::kUInt8, {2}, {0, 255});
}

TEST_CASE("Cast refuses strings and keeps the shape") {
  auto out = Run("Cast", CastAttrs(DType::kString, DType::kInt32), {Str({"1"}, {1})});
  CheckInvalid(out.status(), "SrcT");
  CHECK(InferOne("Cast", CastAttrs(DType::kFloat32, DType::kInt64), {PartialShape({-1, 2})}) ==
        PartialShape({-1, 2}));
}

}  // namespace
}  // namespace tfd::array_test
