// Embedding lookups on real tfd processes: a table in three shards over two
// ps tasks, looked up and trained from a worker. Each shard's Gather runs on
// the shard's ps, the batch is put back together on the worker, and a bad id
// is refused by name across the RPC.
#include <catch2/catch.hpp>

#include "api/embedding_ops.h"
#include "api/optimizers.h"
#include "api/placement.h"
#include "tests/api/api_test_util.h"
#include "tests/integration/cluster_fixture.h"

namespace tfd {
namespace {

constexpr int64_t kRows = 11, kCols = 2;

float Cell(int64_t r, int64_t c) { return static_cast<float>(10 * r + c); }

// Table "emb" ([kRows, kCols], row r column c holding 10 r + c) in three
// shards over two ps tasks; "lookup" of "ids" by "div", and "train", one
// SGD step of rate 1 on the sum of the rows looked up.
GraphDef TableGraph() {
  const Scope root = Scope::NewRootScope(testing::AllOps())
                         .WithDeviceFunction(train::ReplicaDeviceSetter({.ps_tasks = 2}));
  std::vector<float> whole;
  for (int64_t r = 0; r < kRows; ++r) {
    for (int64_t c = 0; c < kCols; ++c) whole.push_back(Cell(r, c));
  }
  ops::PartitionedVariable emb(
      root.WithOpName("emb"), {kRows, kCols}, DType::kFloat32,
      ops::Initializer::Value(Tensor::FromVector(whole, TensorShape({kRows, kCols}))),
      ops::FixedSizePartitioner(3));
  const Output ids = ops::Placeholder(root.WithOpName("ids"), DType::kInt64);
  const Output rows =
      ops::EmbeddingLookup(root.WithOpName("lookup"), emb, ids, {.partition_strategy = "div"});
  train::GradientDescent(1).Minimize(root.WithOpName("train"), ops::Sum(root, rows, {0, 1}));
  ops::GlobalVariablesInitializer(root.WithOpName("init"));
  INFO(root.status().ToString());
  REQUIRE(root.ok());
  return root.ToGraphDef();
}

TEST_CASE("a partitioned lookup gathers on each shard's ps and trains the rows it read") {
  testing::LocalCluster cluster({{"ps", 2}, {"worker", 1}});
  REQUIRE(cluster.StartAll().ok());
  auto chief = cluster.Connect("worker", 0);
  REQUIRE(chief.ok());
  const GraphDef graph = TableGraph();
  REQUIRE((*chief)->CreateSession(graph).ok());
  REQUIRE((*chief)->Run({}, {}, {"init"}, {}).ok());

  const std::vector<int64_t> batch = {10, 0, 4, 4, 7, 0};  // shards 2, 0, 1, 1, 1, 0
  const Tensor ids = Tensor::FromVector<int64_t>(batch);
  auto out = (*chief)->Run({{"ids", ids}}, {"lookup"}, {}, {.trace = true});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  const Tensor& got = out->fetches[0];
  REQUIRE(got.shape() == TensorShape({6, kCols}));
  for (size_t i = 0; i < batch.size(); ++i) {
    CHECK(got.data<float>()[i * kCols] == Cell(batch[i], 0));
    CHECK(got.data<float>()[i * kCols + 1] == Cell(batch[i], 1));
  }
  // Where each node ran: the shards' gathers on their ps tasks (0, 1, 0 by
  // round robin), the batch's stitching on the worker.
  std::map<std::string, std::string> ran_on;  // Gather's input -> device, for the shards
  for (const auto& n : out->stats.nodes) {
    for (const NodeDef& node : graph.nodes) {
      if (node.name == n.node && node.op == "Gather") ran_on[node.inputs[0]] = n.device;
    }
    if (n.node == "lookup") CHECK(n.device == "/job:worker/replica:0/task:0/device:CPU:0");
  }
  CHECK(ran_on["emb/part_0/read"] == "/job:ps/replica:0/task:0/device:CPU:0");
  CHECK(ran_on["emb/part_1/read"] == "/job:ps/replica:0/task:1/device:CPU:0");
  CHECK(ran_on["emb/part_2/read"] == "/job:ps/replica:0/task:0/device:CPU:0");

  // One step: each row read moves by -1 per time it was read.
  REQUIRE((*chief)->Run({{"ids", ids}}, {}, {"train"}, {}).ok());
  auto after = (*chief)->Run({{"ids", Tensor::FromVector<int64_t>({0, 4, 10, 1})}}, {"lookup"},
                             {}, {});
  REQUIRE(after.ok());
  const std::vector<float> want = {Cell(0, 0) - 2, Cell(4, 0) - 2, Cell(10, 0) - 1, Cell(1, 0)};
  for (size_t i = 0; i < want.size(); ++i) CHECK(after->fetches[0].data<float>()[i * kCols] == want[i]);

  auto bad = (*chief)->Run({{"ids", Tensor::FromVector<int64_t>({3, -2})}}, {"lookup"}, {}, {});
  CHECK(bad.status().code() == Code::kInvalidArgument);
  CHECK(bad.status().message().find("lookup/ids_in_vocabulary") != std::string::npos);
  CHECK(bad.status().message().find("indices[1] = -2 is not in [0, 11)") != std::string::npos);
}

}  // namespace
}  // namespace tfd
