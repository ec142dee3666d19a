// Unique, DynamicPartition and DynamicStitch, the ops of embedding_lookup
// over a partitioned table: their outputs against references computed here,
// the "mod" and "div" round trip, repeated and NaN values, empty batches,
// and bad partitions and indices refused.
#include <cmath>
#include <limits>

#include "tests/kernels/array/array_test_util.h"

namespace tfd::array_test {
namespace {

TEST_CASE("Unique keeps first appearances and maps each element to its value") {
  for (DType out_idx : {DType::kInt32, DType::kInt64}) {
    auto out = Run("Unique", {{"T", DType::kInt64}, {"out_idx", out_idx}},
                   {I64({7, 3, 7, 7, -1, 3, 0})});
    REQUIRE(out.ok());
    CheckTensor((*out)[0], DType::kInt64, TensorShape({4}), {7, 3, -1, 0});
    CheckTensor((*out)[1], out_idx, TensorShape({7}), {0, 1, 0, 0, 2, 1, 3});
  }
  auto ints = Run("Unique", {{"T", DType::kInt32}}, {I32({5})});
  REQUIRE(ints.ok());
  CheckTensor((*ints)[0], DType::kInt32, TensorShape({1}), {5});
  CheckTensor((*ints)[1], DType::kInt32, TensorShape({1}), {0});
  auto empty = Run("Unique", {{"T", DType::kInt32}}, {I32({})});
  REQUIRE(empty.ok());
  CheckTensor((*empty)[0], DType::kInt32, TensorShape({0}), {});
  CheckTensor((*empty)[1], DType::kInt32, TensorShape({0}), {});
  auto strs = Run("Unique", {{"T", DType::kString}}, {Str({"b", "a", "b", ""}, TensorShape({4}))});
  REQUIRE(strs.ok());
  REQUIRE((*strs)[0].num_elements() == 3);
  CHECK((*strs)[0].data<std::string>()[0] == "b");
  CHECK((*strs)[0].data<std::string>()[2] == "");
  CheckTensor((*strs)[1], DType::kInt32, TensorShape({4}), {0, 1, 0, 2});
}

TEST_CASE("Unique compares floats with ==: zeros merge, each NaN stands alone") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const double tiny = std::numeric_limits<double>::denorm_min();
  auto out = Run("Unique", {{"T", DType::kFloat64}},
                 {F64({-0.0, nan, 0.0, inf, nan, tiny, -inf, inf, tiny}, TensorShape({9}))});
  REQUIRE(out.ok());
  const Tensor& y = (*out)[0];
  REQUIRE(y.num_elements() == 6);
  CHECK(std::signbit(y.data<double>()[0]));  // -0.0 came first
  CHECK(std::isnan(y.data<double>()[1]));
  CHECK(y.data<double>()[2] == inf);
  CHECK(std::isnan(y.data<double>()[3]));
  CHECK(y.data<double>()[4] == tiny);
  CHECK(y.data<double>()[5] == -inf);
  CheckTensor((*out)[1], DType::kInt32, TensorShape({9}), {0, 1, 0, 2, 3, 4, 5, 2, 4});
}

TEST_CASE("Unique refuses a non-vector") {
  CheckInvalid(Run("Unique", {{"T", DType::kInt32}}, {I32({1, 2, 3, 4}, TensorShape({2, 2}))})
                   .status(),
               "x must be a vector");
  CheckInvalid(InferShapes("Unique", {{"T", DType::kInt32}}, {PartialShape({2, 2})}).status(),
               "rank");
}

// The ids of a batch split over `shards` as embedding_lookup does, then
// stitched back: what comes back is the batch.
void RoundTrip(const std::vector<int32_t>& ids, const std::vector<int32_t>& shard_of,
               int64_t shards) {
  const int64_t n = static_cast<int64_t>(ids.size());
  // Rows of width 2 standing for the looked-up embeddings: id * 10 + {0, 1}.
  std::vector<double> rows;
  for (int32_t id : ids) rows.insert(rows.end(), {id * 10.0, id * 10.0 + 1});
  auto parts = Run("DynamicPartition", {{"T", DType::kFloat64}, {"num_partitions", shards}},
                   {F64(rows, TensorShape({n, 2})), I32(shard_of)});
  REQUIRE(parts.ok());
  REQUIRE(static_cast<int64_t>(parts->size()) == shards);
  std::vector<int32_t> positions(n);
  for (int64_t i = 0; i < n; ++i) positions[i] = static_cast<int32_t>(i);
  auto pos_parts = Run("DynamicPartition", {{"T", DType::kInt32}, {"num_partitions", shards}},
                       {I32(positions), I32(shard_of)});
  REQUIRE(pos_parts.ok());
  for (int64_t k = 0; k < shards; ++k) {  // each shard holds its rows, in batch order
    std::vector<double> want;
    for (int64_t i = 0; i < n; ++i) {
      if (shard_of[i] == k) want.insert(want.end(), {ids[i] * 10.0, ids[i] * 10.0 + 1});
    }
    CheckTensor((*parts)[k], DType::kFloat64,
                TensorShape({static_cast<int64_t>(want.size() / 2), 2}), want);
  }
  std::vector<Tensor> stitch_in(pos_parts->begin(), pos_parts->end());
  stitch_in.insert(stitch_in.end(), parts->begin(), parts->end());
  const Tensor merged =
      RunOne("DynamicStitch", {{"T", DType::kFloat64}, {"N", shards}}, std::move(stitch_in));
  CheckTensor(merged, DType::kFloat64, TensorShape({n, 2}), rows);
}

TEST_CASE("DynamicPartition and DynamicStitch round-trip a batch, mod and div") {
  const std::vector<int32_t> ids = {9, 0, 4, 4, 7, 2, 9, 5};
  for (int64_t shards : {1, 2, 3}) {
    std::vector<int32_t> mod, div;
    for (int32_t id : ids) {
      mod.push_back(id % static_cast<int32_t>(shards));
      div.push_back(id / ((10 + static_cast<int32_t>(shards) - 1) / static_cast<int32_t>(shards)));
    }
    RoundTrip(ids, mod, shards);
    RoundTrip(ids, div, shards);
  }
  RoundTrip({}, {}, 2);  // an empty batch: empty shards, an empty result
}

TEST_CASE("DynamicPartition takes any prefix of data's shape; rows of strings too") {
  auto out = Run("DynamicPartition", {{"T", DType::kString}, {"num_partitions", int64_t{2}}},
                 {Str({"a", "b", "c", "d", "e", "f"}, TensorShape({3, 2})), I32({1, 0, 1})});
  REQUIRE(out.ok());
  REQUIRE((*out)[1].shape() == TensorShape({2, 2}));
  CHECK((*out)[1].data<std::string>()[2] == "e");
  auto scalars = Run("DynamicPartition", {{"T", DType::kFloat64}, {"num_partitions", int64_t{3}}},
                     {Iota(TensorShape({2, 2})), I32({2, 0, 2, 2}, TensorShape({2, 2}))});
  REQUIRE(scalars.ok());
  CheckTensor((*scalars)[0], DType::kFloat64, TensorShape({1}), {1});
  CheckTensor((*scalars)[1], DType::kFloat64, TensorShape({0}), {});
  CheckTensor((*scalars)[2], DType::kFloat64, TensorShape({3}), {0, 2, 3});
}

TEST_CASE("DynamicPartition refuses partitions out of range or of the wrong shape") {
  AttrMap attrs{{"T", DType::kFloat64}, {"num_partitions", int64_t{2}}};
  CheckInvalid(Run("DynamicPartition", attrs, {Iota(TensorShape({3})), I32({0, 2, 1})}).status(),
               "partitions[1] = 2 is not in [0, 2)");
  CheckInvalid(Run("DynamicPartition", attrs, {Iota(TensorShape({3})), I32({0, -1, 1})}).status(),
               "partitions[1] = -1");
  CheckInvalid(Run("DynamicPartition", attrs, {Iota(TensorShape({3})), I32({0, 1})}).status(),
               "must be a prefix of data's shape");
  auto shapes = InferShapes("DynamicPartition", attrs, {PartialShape({-1, 4}), PartialShape({-1})});
  REQUIRE(shapes.ok());
  CHECK((*shapes)[0] == PartialShape({-1, 4}));
  CHECK((*shapes)[1] == PartialShape({-1, 4}));
}

TEST_CASE("DynamicStitch: later inputs win, gaps are zero, bad indices are refused") {
  AttrMap attrs{{"T", DType::kFloat64}, {"N", int64_t{2}}};
  // Index 1 appears in both inputs: the second wins. Index 3 appears nowhere.
  const Tensor merged = RunOne("DynamicStitch", attrs,
                               {I32({0, 1}), I32({4, 1}), F64({1, 2}, TensorShape({2})),
                                F64({5, 6}, TensorShape({2}))});
  CheckTensor(merged, DType::kFloat64, TensorShape({5}), {1, 6, 0, 0, 5});
  CheckTensor(RunOne("ParallelDynamicStitch", attrs,
                     {I32({2}), I32({0, 1}), F64({3}, TensorShape({1})),
                      F64({1, 2}, TensorShape({2}))}),
              DType::kFloat64, TensorShape({3}), {1, 2, 3});
  CheckInvalid(Run("DynamicStitch", attrs,
                   {I32({0}), I32({-1}), F64({1}, TensorShape({1})), F64({2}, TensorShape({1}))})
                   .status(),
               "indices[1][0] = -1 is negative");
  CheckInvalid(Run("DynamicStitch", attrs,
                   {I32({0}), I32({1, 2}), F64({1, 1}, TensorShape({1, 2})),
                    F64({2, 2, 2}, TensorShape({2, 1}))})
                   .status(),
               "data[1] is float64[2, 1]");
  CheckInvalid(Run("DynamicStitch", attrs,
                   {I32({0, 1}), I32({2}), F64({1}, TensorShape({1})), F64({2}, TensorShape({1}))})
                   .status(),
               "must start with the shape of indices[0]");
  CHECK(InferOne("DynamicStitch", attrs,
                 {PartialShape({-1}), PartialShape({3}), PartialShape({-1, 8}),
                  PartialShape({3, 8})}) == PartialShape({-1, 8}));
}

}  // namespace
}  // namespace tfd::array_test
