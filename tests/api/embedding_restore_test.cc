// Embedding lookups across a checkpoint that changes the table's shard
// count: a "div" table saved in one sharding and restored into another
// (daemon/checkpoint/sliced_restore.h) looks every id up to the same row.
#include <catch2/catch.hpp>

#include "api/embedding_ops.h"
#include "api/optimizers.h"
#include "daemon/checkpoint/checkpoint_manager.h"
#include "tests/api/api_test_util.h"
#include "tests/util/io_test_util.h"

namespace tfd {
namespace {

using testing::ApiEnv;

constexpr int64_t kRows = 11, kCols = 3;
const std::vector<int64_t> kIds = {10, 0, 4, 4, 7, 3, 5, 9, 1};

// The task's checkpoints in DIR/ps-0, DIR shared as tfd's --checkpoint-dir.
std::unique_ptr<CheckpointManager> Checkpoints(ApiEnv& env, const std::filesystem::path& dir) {
  CheckpointManager::Options o;
  o.dir = dir / "ps-0";
  o.cluster_dir = dir;
  auto m = CheckpointManager::Open(o, env.resources(), nullptr);
  INFO(m.status().ToString());
  REQUIRE(m.ok());
  return std::move(m).value();
}

// A graph with table "emb" in `shards` shards (seeded random values: each
// sharding draws its own) and "lookup" of the ids fed to "ids", by "div".
Scope TableGraph(ApiEnv& env, int shards, ops::PartitionedVariable* emb) {
  const Scope root = env.Root();
  *emb = ops::PartitionedVariable(root.WithOpName("emb"), {kRows, kCols}, DType::kFloat32,
                                  ops::Initializer::RandomNormal(1, /*seed=*/shards),
                                  ops::FixedSizePartitioner(shards));
  const Output ids = ops::Placeholder(root.WithOpName("ids"), DType::kInt64);
  ops::EmbeddingLookup(root.WithOpName("lookup"), *emb, ids, {.partition_strategy = "div"});
  ops::GlobalVariablesInitializer(root.WithOpName("init"));
  INFO(root.status().ToString());
  REQUIRE(root.ok());
  return root;
}

std::vector<float> Lookup(LocalSession& session) {
  const Tensor ids = Tensor::FromVector<int64_t>(kIds);
  auto out = session.Run({{"ids", ids}}, {"lookup"}, {});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  const Tensor& t = out->fetches[0];
  REQUIRE(t.shape() == TensorShape({static_cast<int64_t>(kIds.size()), kCols}));
  return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
}

TEST_CASE("a div table restored into another shard count looks every id up the same") {
  for (auto [saved, restored] : {std::pair{3, 2}, std::pair{2, 5}}) {
    INFO(saved << " shards saved, restored into " << restored);
    testing::TempDir dir;
    std::vector<float> before;
    {
      ApiEnv env;
      ops::PartitionedVariable emb;
      auto session = env.Session(TableGraph(env, saved, &emb));
      REQUIRE(session->Run({}, {}, {"init"}).ok());
      before = Lookup(*session);
      auto ckpt = Checkpoints(env, dir.path());
      REQUIRE(ckpt->Write(1).ok());
      REQUIRE(ckpt->Commit(1).ok());
    }
    ApiEnv env;
    ops::PartitionedVariable emb;
    auto session = env.Session(TableGraph(env, restored, &emb));
    // The new shards are declared (as the graph's first step declares
    // them), then filled from the checkpoint instead of initialized.
    std::vector<std::string> shards;
    for (const auto& s : emb.shards()) shards.push_back(s.variable.name());
    REQUIRE(session->Run({}, {}, shards).ok());
    auto done = Checkpoints(env, dir.path())->Restore(1);
    INFO(done.status().ToString());
    REQUIRE(done.ok());
    CHECK(Lookup(*session) == before);
  }
}

// TableGraph plus "train": Adagrad on the rows the ids look up, so each
// shard has a slot "<shard>/Adagrad" whose touched rows moved.
Scope TrainedTableGraph(ApiEnv& env, int shards, ops::PartitionedVariable* emb) {
  const Scope root = env.Root();
  *emb = ops::PartitionedVariable(root.WithOpName("emb"), {kRows, kCols}, DType::kFloat32,
                                  ops::Initializer::RandomNormal(1, /*seed=*/shards),
                                  ops::FixedSizePartitioner(shards));
  const Output ids = ops::Placeholder(root.WithOpName("ids"), DType::kInt64);
  const Output rows =
      ops::EmbeddingLookup(root.WithOpName("lookup"), *emb, ids, {.partition_strategy = "div"});
  const Output loss = ops::Sum(root.WithOpName("loss"), ops::Square(root, rows), {0, 1});
  train::Adagrad(0.1).Minimize(root.WithOpName("train"), loss);
  ops::GlobalVariablesInitializer(root.WithOpName("init"));
  INFO(root.status().ToString());
  REQUIRE(root.ok());
  return root;
}

// Every shard's Adagrad slot, concatenated in row order: the logical slot.
std::vector<float> Accumulators(LocalSession& session, const ops::PartitionedVariable& emb) {
  std::vector<std::string> names;
  for (const auto& s : emb.shards()) names.push_back(s.variable.name() + "/Adagrad");
  auto out = session.Run({}, names, {});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  std::vector<float> all;
  for (const Tensor& t : out->fetches) {
    all.insert(all.end(), t.data<float>(), t.data<float>() + t.num_elements());
  }
  return all;
}

TEST_CASE("an optimizer's slots of a partitioned table restore into another shard count") {
  const Tensor ids = Tensor::FromVector<int64_t>(kIds);
  for (auto [saved, restored] : {std::pair{3, 2}, std::pair{2, 5}}) {
    INFO(saved << " shards saved, restored into " << restored);
    testing::TempDir dir;
    std::vector<float> before;
    {
      ApiEnv env;
      ops::PartitionedVariable emb;
      auto session = env.Session(TrainedTableGraph(env, saved, &emb));
      REQUIRE(session->Run({}, {}, {"init"}).ok());
      REQUIRE(session->Run({{"ids", ids}}, {}, {"train"}).ok());
      before = Accumulators(*session, emb);
      REQUIRE(before.size() == static_cast<size_t>(kRows * kCols));
      auto ckpt = Checkpoints(env, dir.path());
      REQUIRE(ckpt->Write(1).ok());
      REQUIRE(ckpt->Commit(1).ok());
    }
    ApiEnv env;
    ops::PartitionedVariable emb;
    auto session = env.Session(TrainedTableGraph(env, restored, &emb));
    std::vector<std::string> declare;
    for (const auto& s : emb.shards()) {
      declare.push_back(s.variable.name());
      declare.push_back(s.variable.name() + "/Adagrad");
    }
    REQUIRE(session->Run({}, {}, declare).ok());
    auto done = Checkpoints(env, dir.path())->Restore(1);
    INFO(done.status().ToString());
    REQUIRE(done.ok());
    CHECK(Accumulators(*session, emb) == before);
  }
}

}  // namespace
}  // namespace tfd
