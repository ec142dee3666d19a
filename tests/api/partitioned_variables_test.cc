// Partitioned variables: the row split, the partitioners' arithmetic, the
// shards' names, placement and slice info, and their value read whole.
#include "api/partitioned_variables.h"

#include <catch2/catch.hpp>

#include "api/placement.h"
#include "common/save_slice_info.h"
#include "kernels/state/variable.h"
#include "tests/api/api_test_util.h"

namespace tfd {
namespace {

using ops::FixedSizePartitioner;
using ops::Initializer;
using ops::MinMaxVariablePartitioner;
using ops::PartitionedVariable;
using ops::RowRange;
using ops::SplitRows;
using ops::Variable;

std::vector<RowRange> Split(int64_t rows, int shards) {
  auto r = SplitRows(rows, shards);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  return *r;
}

int Shards(const ops::Partitioner& p, const TensorShape& shape, DType dtype) {
  auto n = p(shape, dtype);
  INFO(n.status().ToString());
  REQUIRE(n.ok());
  return *n;
}

const NodeDef& NodeOf(const Scope& s, const std::string& name) {
  const int id = s.FindNode(name);
  INFO("node " << name);
  REQUIRE(id >= 0);
  return s.node(id);
}

TEST_CASE("rows split as TensorFlow splits them: the first rows % shards get one more") {
  CHECK(Split(10, 3) == std::vector<RowRange>{{0, 4}, {4, 3}, {7, 3}});
  CHECK(Split(11, 3) == std::vector<RowRange>{{0, 4}, {4, 4}, {8, 3}});
  CHECK(Split(9, 3) == std::vector<RowRange>{{0, 3}, {3, 3}, {6, 3}});
  CHECK(Split(3, 3) == std::vector<RowRange>{{0, 1}, {1, 1}, {2, 1}});
  CHECK(Split(5, 1) == std::vector<RowRange>{{0, 5}});
}

TEST_CASE("more shards than rows, or no shards, is refused as in TensorFlow") {
  CHECK(SplitRows(2, 3).status().code() == Code::kInvalidArgument);
  CHECK(SplitRows(0, 1).status().code() == Code::kInvalidArgument);
  CHECK(SplitRows(10, 0).status().code() == Code::kInvalidArgument);
  CHECK(FixedSizePartitioner(0)(TensorShape({10}), DType::kFloat32).status().code() ==
        Code::kInvalidArgument);
}

TEST_CASE("the min-max partitioner takes ceil(bytes / min_slice_size) within its bounds") {
  const TensorShape shape({1000, 16});  // 64000 bytes of float32
  // TensorFlow's default minimum slice, 256 KiB, keeps a small table whole.
  CHECK(Shards(MinMaxVariablePartitioner(8), shape, DType::kFloat32) == 1);
  CHECK(Shards(MinMaxVariablePartitioner(8, 16000), shape, DType::kFloat32) == 4);  // exactly
  CHECK(Shards(MinMaxVariablePartitioner(8, 16001), shape, DType::kFloat32) == 4);  // 3.999
  CHECK(Shards(MinMaxVariablePartitioner(8, 15999), shape, DType::kFloat32) == 5);  // 4.0003
  CHECK(Shards(MinMaxVariablePartitioner(8, 15999), shape, DType::kFloat64) == 8);  // 8.0006
  CHECK(Shards(MinMaxVariablePartitioner(3, 1), shape, DType::kFloat32) == 3);      // max
  CHECK(Shards(MinMaxVariablePartitioner(100, 1), TensorShape({3, 1000}), DType::kFloat32) ==
        3);  // no more shards than rows
  CHECK(Shards(MinMaxVariablePartitioner(100, 16), TensorShape({10}), DType::kString) == 10);
  CHECK(MinMaxVariablePartitioner(0)(shape, DType::kFloat32).status().code() ==
        Code::kInvalidArgument);
}

TEST_CASE("shards are NAME/part_i, placed one by one over the ps tasks, with their slice") {
  const Scope root = Scope::NewRootScope(testing::AllOps())
                         .WithDeviceFunction(train::ReplicaDeviceSetter({.ps_tasks = 2}));
  PartitionedVariable emb(root.WithName("layer").WithOpName("emb"), {10, 4}, DType::kFloat32,
                          Initializer::Zeros(), FixedSizePartitioner(3));
  REQUIRE(root.ok());
  REQUIRE(emb.valid());
  CHECK(emb.name() == "layer/emb");
  REQUIRE(emb.shards().size() == 3);
  const char* devices[] = {"/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:0"};
  const int64_t first[] = {0, 4, 7}, rows[] = {4, 3, 3};
  for (int i = 0; i < 3; ++i) {
    const auto& s = emb.shards()[i];
    INFO("shard " << i);
    CHECK(s.variable.name() == "layer/emb/part_" + std::to_string(i));
    CHECK(s.variable.device() == devices[i]);
    CHECK(s.first_row == first[i]);
    CHECK(s.rows == rows[i]);
    const NodeDef& node = NodeOf(root, s.variable.name());
    CHECK(std::get<PartialShape>(node.attrs.at("shape")) == PartialShape({rows[i], 4}));
    auto slice = SaveSliceInfo::Parse(std::get<std::string>(node.attrs.at(kSaveSliceInfoAttr)));
    REQUIRE(slice.ok());
    CHECK(*slice == SaveSliceInfo{"layer/emb", TensorShape({10, 4}), first[i], rows[i]});
  }
  CHECK(ops::GlobalVariables(root).size() == 3);
}

TEST_CASE("a partitioning that cannot be made fails the scope naming the variable") {
  const Scope root = Scope::NewRootScope(testing::AllOps());
  PartitionedVariable bad(root.WithOpName("emb"), {2, 4}, DType::kFloat32, Initializer::Zeros(),
                          FixedSizePartitioner(3));
  CHECK_FALSE(bad.valid());
  CHECK(root.status().code() == Code::kInvalidArgument);
  const Scope root2 = Scope::NewRootScope(testing::AllOps());
  PartitionedVariable scalar(root2.WithOpName("s"), TensorShape(), DType::kFloat32,
                             Initializer::Zeros(), FixedSizePartitioner(1));
  CHECK_FALSE(scalar.valid());
  CHECK(root2.status().message().find("'s'") != std::string::npos);
}

TEST_CASE("a Value initializer of another shape than the variable's is a scope error") {
  const Scope root = Scope::NewRootScope(testing::AllOps());
  PartitionedVariable v(root.WithOpName("v"), {7, 2}, DType::kFloat32,
                        Initializer::Value(Tensor::FromVector(std::vector<float>(20, 1.0f),
                                                              TensorShape({10, 2}))),
                        FixedSizePartitioner(3));
  CHECK_FALSE(v.valid());
  CHECK(root.status().code() == Code::kInvalidArgument);
}

TEST_CASE("a Value initializer that does not fit a variable names it and both shapes") {
  const Scope root = Scope::NewRootScope(testing::AllOps());
  Variable v(root.WithOpName("w"), {2, 2}, DType::kFloat32,
             Initializer::Value(Tensor::FromVector(std::vector<float>(3, 1.0f), TensorShape({3}))));
  CHECK_FALSE(v.valid());
  CHECK(root.status().code() == Code::kInvalidArgument);
  const std::string message(root.status().message());
  CHECK(message.find("'w'") != std::string::npos);
  CHECK(message.find("[3]") != std::string::npos);
  CHECK(message.find("[2, 2]") != std::string::npos);
}

TEST_CASE("the shards of a Value initializer read back whole as the value, row for row") {
  testing::ApiEnv env;
  const Scope root = env.Root();
  std::vector<float> values(7 * 2);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  PartitionedVariable v(root.WithOpName("v"), {7, 2}, DType::kFloat32,
                        Initializer::Value(Tensor::FromVector(values, TensorShape({7, 2}))),
                        FixedSizePartitioner(3));
  const Output whole = v.AsTensor(root.WithOpName("whole"));
  ops::GlobalVariablesInitializer(root.WithOpName("init"));
  REQUIRE(env.Run(root, {}, {}, {"init"}).ok());
  auto out = env.Run(root, {}, {"whole"});
  REQUIRE(out.ok());
  REQUIRE((*out)[0].shape() == TensorShape({7, 2}));
  for (size_t i = 0; i < values.size(); ++i) CHECK((*out)[0].data<float>()[i] == values[i]);
  // The kernel keeps each shard's slice, which checkpoints save.
  auto part1 = env.resources().Lookup<kernels::Variable>("", "v/part_1");
  REQUIRE(part1.ok());
  REQUIRE((*part1)->CheckpointSlice().has_value());
  CHECK(*(*part1)->CheckpointSlice() == SaveSliceInfo{"v", TensorShape({7, 2}), 3, 2});
}

TEST_CASE("a seeded random initializer draws each shard from its own seed") {
  testing::ApiEnv env;
  const Scope root = env.Root();
  PartitionedVariable v(root.WithOpName("v"), {4, 3}, DType::kFloat32,
                        Initializer::RandomUniform(0, 1, /*seed=*/7), FixedSizePartitioner(2));
  ops::GlobalVariablesInitializer(root.WithOpName("init"));
  REQUIRE(env.Run(root, {}, {}, {"init"}).ok());
  auto out = env.Run(root, {}, {"v/part_0", "v/part_1"});
  REQUIRE(out.ok());
  // Same shape, same base seed: without a seed per shard both would match.
  bool differ = false;
  for (int i = 0; i < 6; ++i) differ |= (*out)[0].data<float>()[i] != (*out)[1].data<float>()[i];
  CHECK(differ);
}

// What a restore on start leaves when no graph has run yet: shard `name`
// made from a checkpoint, with the slice it was saved with.
void LeaveRestoredShard(testing::ApiEnv& env, const std::string& name, const SaveSliceInfo& slice) {
  auto made = kernels::MakeRestoredVariable(
      "", name, Tensor::FromVector(std::vector<float>(slice.ShardShape().num_elements(), 1.0f),
                                   slice.ShardShape()));
  REQUIRE(made.ok());
  (*made)->RestoreSlice(slice);
  auto held = env.resources().LookupOrCreate<kernels::Variable>(
      "", name, [&]() -> StatusOr<std::shared_ptr<kernels::Variable>> { return *made; });
  REQUIRE(held.ok());
}

TEST_CASE("a shard restored from another sharding gives way to the graph's declaration") {
  testing::ApiEnv env;
  LeaveRestoredShard(env, "v/part_0", {"v", TensorShape({7, 2}), 0, 4});  // saved in 2 shards
  const Scope root = env.Root();
  PartitionedVariable v(root.WithOpName("v"), {7, 2}, DType::kFloat32, Initializer::Zeros(),
                        FixedSizePartitioner(3));
  ops::GlobalVariablesInitializer(root.WithOpName("init"));
  auto init = env.Run(root, {}, {}, {"init"});
  INFO(init.status().ToString());
  REQUIRE(init.ok());
  auto out = env.Run(root, {}, {"v/part_0"});
  REQUIRE(out.ok());
  CHECK((*out)[0].shape() == TensorShape({3, 2}));
}

TEST_CASE("a shard restored with the graph's own slice is adopted with its value") {
  testing::ApiEnv env;
  LeaveRestoredShard(env, "v/part_0", {"v", TensorShape({7, 2}), 0, 3});
  const Scope root = env.Root();
  PartitionedVariable v(root.WithOpName("v"), {7, 2}, DType::kFloat32, Initializer::Zeros(),
                        FixedSizePartitioner(3));
  auto out = env.Run(root, {}, {"v/part_0"});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  REQUIRE((*out)[0].shape() == TensorShape({3, 2}));
  CHECK((*out)[0].data<float>()[5] == 1.0f);
}

}  // namespace
}  // namespace tfd
