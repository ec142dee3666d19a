// Every differentiable array op's gradient against central finite
// differences in float64.
#include <catch2/catch.hpp>

#include "common/gradients.h"
#include "tests/api/api_test_util.h"

namespace tfd {
namespace {

using testing::CheckGradientsAllModes;
using testing::RandomTensor;
using testing::ShapeMode;
using Xs = std::vector<Output>;

// Ops whose gradient needs the rank of their inputs (as TensorFlow's would
// for these forms) are checked with known shapes and known ranks.
const std::vector<ShapeMode> kRankKnown = {ShapeMode::kKnown, ShapeMode::kUnknownDims};

TEST_CASE("StridedSlice's gradient scatters dy back, and StridedSliceGrad's slices it") {
  const Tensor x = RandomTensor({4, 3, 2}, 47);
  // x[3:0:-2, ..., 1], x[newaxis, 1:, ::-1] and x[-1] with int64 indices.
  CheckGradientsAllModes("StridedSlice negative stride, ellipsis, shrink",
                         [](const Scope& s, const Xs& in) {
    return ops::StridedSlice(s, in[0], {3, 0, 1}, {0, 0, 2}, {-2, 1, 1},
                             {.ellipsis_mask = 2, .shrink_axis_mask = 4});
  }, {x}, kRankKnown);
  CheckGradientsAllModes("StridedSlice new axis", [](const Scope& s, const Xs& in) {
    return ops::StridedSlice(s, in[0], {0, 1, 0}, {0, 0, 0}, {1, 1, -1},
                             {.begin_mask = 4, .end_mask = 6, .new_axis_mask = 1});
  }, {x});
  CheckGradientsAllModes("StridedSlice int64 shrink", [](const Scope& s, const Xs& in) {
    return ops::StridedSlice(s, in[0], {int64_t{-1}}, {int64_t{0}}, {int64_t{1}},
                             {.shrink_axis_mask = 1});
  }, {x});
  // StridedSliceGrad(shape, ...)(dy) is linear in dy: differentiate it too.
  CheckGradientsAllModes("StridedSliceGrad", [](const Scope& s, const Xs& in) {
    return s.AddOperation("StridedSliceGrad",
                          {ops::Const(s, {4, 3, 2}), ops::Const(s, {1, 0}),
                           ops::Const(s, {4, 0}), ops::Const(s, {2, 1}), in[0]},
                          {{"end_mask", int64_t{2}}})
        .output(0);
  }, {RandomTensor({2, 3, 2}, 48)}, kRankKnown);
}

TEST_CASE("GatherNd and ScatterNd gradients are each other, repeats summed") {
  // Rows of params [3, 4, 2] picked by [row, col] pairs, one of them twice.
  const Tensor pairs = Tensor::FromVector<int32_t>({2, 1, 0, 3, 2, 1}, TensorShape{3, 2});
  CheckGradientsAllModes("GatherNd", [&](const Scope& s, const Xs& in) {
    return ops::GatherNd(s, in[0], pairs);
  }, {RandomTensor({3, 4, 2}, 49)});
  const Tensor rows = Tensor::FromVector<int64_t>({1, 0, 1}, TensorShape{3, 1});
  CheckGradientsAllModes("ScatterNd", [&](const Scope& s, const Xs& in) {
    return ops::ScatterNd(s, rows, in[0], {int64_t{2}, int64_t{3}});
  }, {RandomTensor({3, 3}, 50)});
}

TEST_CASE("reshaping ops pass the gradient back in the input's shape") {
  const Tensor x = RandomTensor({2, 3}, 41);
  CheckGradientsAllModes("Reshape", [](const Scope& s, const Xs& in) {
    return ops::Reshape(s, in[0], {3, 2});
  }, {x});
  CheckGradientsAllModes("ExpandDims", [](const Scope& s, const Xs& in) {
    return ops::ExpandDims(s, in[0], 1);
  }, {x});
  CheckGradientsAllModes("Squeeze", [](const Scope& s, const Xs& in) {
    return ops::Squeeze(s, in[0], {1});
  }, {RandomTensor({2, 1, 3}, 42)});
  CheckGradientsAllModes("PlaceholderWithDefault", [](const Scope& s, const Xs& in) {
    return ops::Square(s, ops::PlaceholderWithDefault(s, in[0], PartialShape::Unknown()));
  }, {x});
}

TEST_CASE("Cast between float types passes the gradient through") {
  // float64 -> float64 is exact; the float32 round trip is checked at a
  // looser tolerance by comparing against the exact derivative (3).
  CheckGradientsAllModes("Cast float64->float64", [](const Scope& s, const Xs& in) {
    return ops::Mul(s, ops::Cast(s, in[0], DType::kFloat64), 3.0);
  }, {RandomTensor({2, 2}, 43)});
  testing::ApiEnv env;
  const Scope root = env.Root();
  const Output x = ops::Placeholder(root.WithOpName("x"), DType::kFloat64, {2});
  const Output y = ops::Cast(root, ops::Mul(root, ops::Cast(root, x, DType::kFloat32), 3.0f),
                             DType::kFloat64);
  auto g = AddGradients(root, {y}, {x});
  REQUIRE(g.ok());
  auto out = env.Run(root, {{"x", Tensor::FromVector<double>({1, 2})}}, {(*g)[0].name()});
  REQUIRE(out.ok());
  CHECK((*out)[0].data<double>()[0] == 3.0);
  CHECK((*out)[0].data<double>()[1] == 3.0);
}

TEST_CASE("Transpose gradient applies the inverse permutation") {
  const Tensor x = RandomTensor({2, 3, 4}, 44);
  CheckGradientsAllModes("Transpose const perm", [](const Scope& s, const Xs& in) {
    return ops::Transpose(s, in[0], {1, 2, 0});
  }, {x});
  CheckGradientsAllModes("Transpose run-time perm", [](const Scope& s, const Xs& in) {
    return ops::Transpose(s, in[0], ops::Identity(s, {2, 0, 1}));
  }, {x});
}

TEST_CASE("Tile gradient sums the copies") {
  CheckGradientsAllModes("Tile", [](const Scope& s, const Xs& in) {
    return ops::Tile(s, in[0], {2, 1, 3});
  }, {RandomTensor({2, 3, 1}, 45)}, kRankKnown);
  CheckGradientsAllModes("Tile run-time multiples", [](const Scope& s, const Xs& in) {
    return ops::Tile(s, in[0], ops::Identity(s, {3, 2}));
  }, {RandomTensor({2, 2}, 46)}, kRankKnown);
}

TEST_CASE("Concat, Pack, Unpack and Split gradients") {
  const Tensor a = RandomTensor({2, 3}, 47), b = RandomTensor({2, 1}, 48);
  const Tensor c = RandomTensor({1, 3}, 49);
  CheckGradientsAllModes("ConcatV2 axis 1", [](const Scope& s, const Xs& in) {
    return ops::Concat(s, {in[0], in[1], in[0]}, 1);
  }, {a, b}, kRankKnown);
  CheckGradientsAllModes("ConcatV2 axis -2", [](const Scope& s, const Xs& in) {
    return ops::Concat(s, {in[0], in[1]}, -2);
  }, {a, c}, kRankKnown);
  CheckGradientsAllModes("Concat (concat_dim first)", [](const Scope& s, const Xs& in) {
    return s.AddOperation("Concat", {ops::Const(s, 0), in[0], in[1]}).output(0);
  }, {a, c}, kRankKnown);
  CheckGradientsAllModes("Pack", [](const Scope& s, const Xs& in) {
    return ops::Stack(s, {in[0], in[1]}, 1);
  }, {a, RandomTensor({2, 3}, 50)});
  // Output 1 of the Unpack is unused: its gradient is zeros.
  CheckGradientsAllModes("Unpack", [](const Scope& s, const Xs& in) {
    const std::vector<Output> parts = ops::Unstack(s, in[0], 3, 1);
    return ops::Add(s, parts[0], ops::Mul(s, parts[2], 2.0));
  }, {a});
  CheckGradientsAllModes("Split", [](const Scope& s, const Xs& in) {
    const std::vector<Output> parts = ops::Split(s, 1, in[0], 3);
    return ops::Mul(s, parts[0], parts[1]);
  }, {a});
}

TEST_CASE("Slice and Pad gradients") {
  const Tensor x = RandomTensor({3, 4}, 51);
  CheckGradientsAllModes("Slice", [](const Scope& s, const Xs& in) {
    return ops::Slice(s, in[0], {1, 1}, {2, -1});
  }, {x});
  CheckGradientsAllModes("Slice run-time begin", [](const Scope& s, const Xs& in) {
    return ops::Slice(s, in[0], ops::Identity(s, {0, 2}), {3, 2});
  }, {x});
  CheckGradientsAllModes("Pad", [](const Scope& s, const Xs& in) {
    return ops::Pad(s, in[0], {{1, 0}, {2, 1}});
  }, {x});
  // [3, 4] padded by 2, 1 rows and 0, 3 columns: [6, 7] (SYMMETRIC may take
  // 3 columns, REFLECT too; REFLECT's 2 rows before need 3 rows).
  for (const char* mode : {"REFLECT", "SYMMETRIC"}) {
    auto pads = [](const Scope& s) {
      return ops::Const(s, Tensor::FromVector<int32_t>({2, 1, 0, 3}, TensorShape{2, 2}));
    };
    CheckGradientsAllModes(
        std::string("MirrorPad ") + mode,
        [&](const Scope& s, const Xs& in) {
          return s.AddOperation("MirrorPad", {in[0], pads(s)}, {{"mode", std::string(mode)}})
              .output(0);
        },
        {x});
    CheckGradientsAllModes(
        std::string("MirrorPadGrad ") + mode,
        [&](const Scope& s, const Xs& in) {
          return s.AddOperation("MirrorPadGrad", {in[0], pads(s)}, {{"mode", std::string(mode)}})
              .output(0);
        },
        {RandomTensor({6, 7}, 54)});
  }
}

TEST_CASE("Gather gradients add the rows that were gathered") {
  const Tensor params = RandomTensor({4, 3}, 52);
  const Tensor ids = Tensor::FromVector<int32_t>({2, 0, 2, 3}, TensorShape{2, 2});
  CheckGradientsAllModes("Gather with a repeated index", [&](const Scope& s, const Xs& in) {
    return ops::Gather(s, in[0], ops::Const(s, ids));
  }, {params}, kRankKnown);
  CheckGradientsAllModes("GatherV2 axis 1", [&](const Scope& s, const Xs& in) {
    return ops::GatherV2(s, in[0], ops::Const(s, Tensor::FromVector<int64_t>({1, 1, 0})), 1);
  }, {RandomTensor({2, 3, 2}, 53)}, kRankKnown);
  CheckGradientsAllModes("UnsortedSegmentSum", [&](const Scope& s, const Xs& in) {
    return ops::UnsortedSegmentSum(s, in[0], ops::Const(s, ids), 5);
  }, {RandomTensor({2, 2, 3}, 54)});
}

TEST_CASE("Fill gradient sums over the filled tensor") {
  CheckGradientsAllModes("Fill", [](const Scope& s, const Xs& in) {
    return ops::Fill(s, {2, 3}, in[0]);
  }, {Tensor::Scalar<double>(0.25)});
}

}  // namespace
}  // namespace tfd
