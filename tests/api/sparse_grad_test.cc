// The gradients of the ops embedding_lookup is built from (DynamicPartition,
// DynamicStitch) against central finite differences in float64.
#include <catch2/catch.hpp>

#include "common/gradients.h"
#include "tests/api/api_test_util.h"

namespace tfd {
namespace {

using testing::CheckGradientsAllModes;
using testing::RandomTensor;
using testing::ShapeMode;
using Xs = std::vector<Output>;

// Concat's gradient needs its inputs' rank, so checks that join the parts
// run with known shapes and known ranks only.
const std::vector<ShapeMode> kRankKnown = {ShapeMode::kKnown, ShapeMode::kUnknownDims};

Tensor I32(const std::vector<int32_t>& v, const TensorShape& shape) {
  return Tensor::FromVector<int32_t>(v, shape);
}

TEST_CASE("DynamicPartition's gradient stitches the parts' gradients back") {
  const Tensor partitions = I32({2, 0, 2, 1, 0}, TensorShape({5}));
  CheckGradientsAllModes("DynamicPartition, every part used", [&](const Scope& s, const Xs& in) {
    const std::vector<Output> parts = s.AddOp(
        "DynamicPartition", {in[0], ops::Const(s, partitions)}, {{"num_partitions", int64_t{3}}});
    return ops::Concat(s, {parts[2], parts[0], parts[1]}, 0);
  }, {RandomTensor({5, 2}, 71)}, kRankKnown);
  // Parts 0 and 2 get no gradient: their rows' gradient is zero.
  CheckGradientsAllModes("DynamicPartition, one part used", [&](const Scope& s, const Xs& in) {
    return s.AddOp("DynamicPartition", {in[0], ops::Const(s, partitions)},
                   {{"num_partitions", int64_t{3}}})[1];
  }, {RandomTensor({5, 2}, 72)});
  CheckGradientsAllModes("DynamicPartition of a matrix by a matrix", [&](const Scope& s,
                                                                        const Xs& in) {
    const std::vector<Output> parts =
        s.AddOp("DynamicPartition", {in[0], ops::Const(s, I32({1, 0, 0, 1}, TensorShape({2, 2})))},
                {{"num_partitions", int64_t{2}}});
    return ops::Concat(s, {parts[0], parts[1]}, 0);
  }, {RandomTensor({2, 2, 3}, 73)}, kRankKnown);
}

TEST_CASE("DynamicStitch's gradient gathers each input's rows") {
  for (const char* op : {"DynamicStitch", "ParallelDynamicStitch"}) {
    CheckGradientsAllModes(op, [&](const Scope& s, const Xs& in) {
      return s.AddOp(op, {ops::Const(s, I32({3, 0}, TensorShape({2}))),
                          ops::Const(s, I32({1, 4, 2}, TensorShape({3}))), in[0], in[1]},
                   {{"N", int64_t{2}}})[0];
    }, {RandomTensor({2, 3}, 74), RandomTensor({3, 3}, 75)});
  }
}

TEST_CASE("SparseSegment combiners' gradients spread each segment back over its rows") {
  for (const char* op : {"SparseSegmentSum", "SparseSegmentMean", "SparseSegmentSqrtN"}) {
    // Row 2 read twice, row 1 never, segment 1 empty.
    CheckGradientsAllModes(op, [&](const Scope& s, const Xs& in) {
      return s.AddOp(op, {in[0], ops::Const(s, I32({2, 0, 2, 3}, TensorShape({4}))),
                          ops::Const(s, I32({0, 0, 2, 2}, TensorShape({4})))})[0];
    }, {RandomTensor({4, 3}, 76)}, kRankKnown);
  }
}

}  // namespace
}  // namespace tfd
