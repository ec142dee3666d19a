// The kernels added for gradients (kernels/array/pad_ops.cc,
// segment_ops.cc): Pad, UnsortedSegmentSum, InvertPermutation against
// hand-worked values, and their refusals of bad input.
#include <catch2/catch.hpp>

#include "api/ops.h"
#include "tests/api/api_test_util.h"
#include "tests/util/kernel_runner.h"

namespace tfd {
namespace {

using testing::AllOps;

Tensor Run1(const std::string& op, AttrMap attrs, std::vector<Tensor> inputs) {
  auto out = testing::RunOp(AllOps(), op, std::move(attrs), std::move(inputs));
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  REQUIRE(out->size() == 1);
  return (*out)[0];
}

Status RunError(const std::string& op, AttrMap attrs, std::vector<Tensor> inputs) {
  auto out = testing::RunOp(AllOps(), op, std::move(attrs), std::move(inputs));
  REQUIRE(!out.ok());
  return out.status();
}

// UnsortedSegmentSum's attrs for data of dtype t and int32 ids.
AttrMap Uss(DType t) { return {{"T", t}, {"Tindices", DType::kInt32}}; }

Tensor I32(std::vector<int32_t> v, TensorShape s) { return Tensor::FromVector<int32_t>(v, s); }
Tensor F64(std::vector<double> v, TensorShape s) { return Tensor::FromVector<double>(v, s); }

TEST_CASE("Pad surrounds the input with zeros") {
  const Tensor x = F64({1, 2, 3, 4, 5, 6}, {2, 3});
  // One row before, one column before and two after.
  CHECK(TensorsEqual(Run1("Pad", {{"T", DType::kFloat64}}, {x, I32({1, 0, 1, 2}, {2, 2})}),
                     F64({0, 0, 0, 0, 0, 0,
                          0, 1, 2, 3, 0, 0,
                          0, 4, 5, 6, 0, 0}, {3, 6})));
  // int64 paddings, a rank-0 input, an empty input.
  CHECK(TensorsEqual(Run1("Pad", {{"T", DType::kFloat64}, {"Tpaddings", DType::kInt64}},
                          {x, Tensor::FromVector<int64_t>({0, 0, 0, 1}, TensorShape{2, 2})}),
                     F64({1, 2, 3, 0, 4, 5, 6, 0}, {2, 4})));
  CHECK(TensorsEqual(Run1("Pad", {{"T", DType::kFloat64}},
                          {Tensor::Scalar<double>(7), I32({}, {0, 2})}),
                     Tensor::Scalar<double>(7)));
  CHECK(TensorsEqual(Run1("Pad", {{"T", DType::kFloat64}},
                          {F64({}, {0, 2}), I32({1, 1, 0, 0}, {2, 2})}),
                     F64({0, 0, 0, 0}, {2, 2})));
  // Strings pad with empty strings.
  const Tensor s = Run1("Pad", {{"T", DType::kString}},
                        {Tensor::FromVector<std::string>({"a"}, TensorShape{1}),
                         I32({1, 1}, {1, 2})});
  REQUIRE(s.shape() == TensorShape({3}));
  CHECK(s.data<std::string>()[1] == "a");
  CHECK(s.data<std::string>()[0].empty());
}

TEST_CASE("Pad refuses negative paddings and paddings of the wrong shape") {
  const Tensor x = F64({1, 2}, {2});
  Status neg = RunError("Pad", {{"T", DType::kFloat64}}, {x, I32({0, -1}, {1, 2})});
  CHECK(neg.code() == Code::kInvalidArgument);
  CHECK(neg.message().find("-1") != std::string::npos);
  Status shape = RunError("Pad", {{"T", DType::kFloat64}}, {x, I32({0, 0, 0, 0}, {2, 2})});
  CHECK(shape.code() == Code::kInvalidArgument);
  CHECK(shape.message().find("[1, 2]") != std::string::npos);
}

TEST_CASE("Pad's shape function knows the padded shape from constant paddings") {
  const Scope root = Scope::NewRootScope(AllOps());
  const Output x = ops::Placeholder(root, DType::kFloat32, {-1, 3});
  CHECK(ops::Pad(root, x, {{1, 1}, {0, 2}}).shape == PartialShape({-1, 5}));
  ops::Pad(root, x, {{1, 1}});
  CHECK(root.status().code() == Code::kInvalidArgument);
}

TEST_CASE("UnsortedSegmentSum adds rows into the segment each id names") {
  const Tensor data = F64({1, 2, 3, 4, 5, 6, 7, 8}, {4, 2});
  CHECK(TensorsEqual(Run1("UnsortedSegmentSum", Uss(DType::kFloat64),
                          {data, I32({0, 2, 0, 1}, {4}), I32({3}, {})}),
                     F64({1 + 5, 2 + 6, 7, 8, 3, 4}, {3, 2})));
  // Ids of rank 2 cover the leading two dimensions; an unused segment is 0.
  CHECK(TensorsEqual(Run1("UnsortedSegmentSum", Uss(DType::kFloat64),
                          {F64({1, 2, 3, 4}, {2, 2}), I32({1, 1, 3, 1}, {2, 2}), I32({4}, {})}),
                     F64({0, 1 + 2 + 4, 0, 3}, {4})));
  // No ids at all: num_segments rows of zeros.
  CHECK(TensorsEqual(Run1("UnsortedSegmentSum", Uss(DType::kFloat64),
                          {F64({}, {0, 2}), I32({}, {0}), I32({2}, {})}),
                     F64({0, 0, 0, 0}, {2, 2})));
  CHECK(TensorsEqual(Run1("UnsortedSegmentSum", Uss(DType::kInt32),
                          {I32({5, 6, 7}, {3}), I32({1, 0, 1}, {3}), I32({2}, {})}),
                     I32({6, 12}, {2})));
}

TEST_CASE("UnsortedSegmentSum refuses ids out of range and mismatched shapes") {
  const Tensor data = F64({1, 2, 3}, {3});
  const AttrMap attrs = Uss(DType::kFloat64);
  Status range = RunError("UnsortedSegmentSum", attrs, {data, I32({0, 3, 1}, {3}), I32({3}, {})});
  CHECK(range.code() == Code::kInvalidArgument);
  CHECK(range.message().find("segment_ids[1] = 3") != std::string::npos);
  Status neg = RunError("UnsortedSegmentSum", attrs, {data, I32({0, -1, 1}, {3}), I32({3}, {})});
  CHECK(neg.code() == Code::kInvalidArgument);
  Status shape = RunError("UnsortedSegmentSum", attrs, {data, I32({0, 1}, {2}), I32({3}, {})});
  CHECK(shape.code() == Code::kInvalidArgument);
  CHECK(shape.message().find("prefix") != std::string::npos);
}

TEST_CASE("InvertPermutation inverts, and refuses what is not a permutation") {
  CHECK(TensorsEqual(Run1("InvertPermutation", {}, {I32({2, 0, 1}, {3})}), I32({1, 2, 0}, {3})));
  CHECK(TensorsEqual(Run1("InvertPermutation", {}, {I32({}, {0})}), I32({}, {0})));
  Status dup = RunError("InvertPermutation", {}, {I32({0, 0, 1}, {3})});
  CHECK(dup.code() == Code::kInvalidArgument);
  CHECK(dup.message().find("x[1] = 0") != std::string::npos);
  CHECK(RunError("InvertPermutation", {}, {I32({0, 3, 1}, {3})}).code() ==
        Code::kInvalidArgument);
}

}  // namespace
}  // namespace tfd
