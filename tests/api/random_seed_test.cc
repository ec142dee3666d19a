// Random seeds as TensorFlow 1 derives them (api/random_seed.h): a graph's
// seed makes every random op of the graph reproducible without op seeds, an
// op seed alone does too, and unseeded ops of a seeded graph draw streams of
// their own.
#include "api/random_seed.h"

#include <catch2/catch.hpp>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "api/data.h"
#include "api/partitioned_variables.h"
#include "tests/api/api_test_util.h"

namespace tfd {
namespace {

using ops::GetSeed;
using ops::kDefaultGraphSeed;
using ops::kMaxSeed;
using ops::OpSeeds;
using testing::ApiEnv;

TEST_CASE("GetSeed follows TF1's rule for graph and op seeds") {
  ApiEnv env;
  const Scope root = env.Root();
  CHECK(GetSeed(root, std::nullopt) == OpSeeds{0, 0});  // neither: nondeterministic
  CHECK(GetSeed(root, 5) == OpSeeds{kDefaultGraphSeed, 5});
  CHECK(GetSeed(root, 0) == OpSeeds{kDefaultGraphSeed, 0});  // 0 is a seed, as in TF1
  CHECK(GetSeed(root, kMaxSeed + 3) == OpSeeds{kDefaultGraphSeed, 3});
  CHECK(GetSeed(root, -1) == OpSeeds{kDefaultGraphSeed, kMaxSeed - 1});  // Python's %

  root.SetRandomSeed(1234);
  CHECK(GetSeed(root, 5) == OpSeeds{1234, 5});
  // The op seed left out: the graph's node count, which moves on with every node.
  ops::Const(root, 1.0f);
  CHECK(GetSeed(root, std::nullopt) == OpSeeds{1234, 1});
  ops::Const(root, 2.0f);
  CHECK(GetSeed(root, std::nullopt) == OpSeeds{1234, 2});

  // A seeded op never gets (0, 0), which the kernels read as unseeded.
  root.SetRandomSeed(kMaxSeed);
  CHECK(GetSeed(root, 0) == OpSeeds{0, kMaxSeed});
  root.SetRandomSeed(std::nullopt);
  CHECK(GetSeed(root, std::nullopt) == OpSeeds{0, 0});
}

// Three runs of `fetch` in one fresh session over the graph `build` makes.
std::vector<Tensor> ThreeRuns(ApiEnv& env, const std::function<Output(const Scope&)>& build,
                              std::optional<int64_t> graph_seed) {
  const Scope root = env.Root();
  if (graph_seed) root.SetRandomSeed(*graph_seed);
  const Output out = build(root);
  auto session = env.Session(root);
  std::vector<Tensor> runs;
  for (int i = 0; i < 3; ++i) {
    auto r = session->Run({}, {out.name()}, {});
    INFO(r.status().ToString());
    REQUIRE(r.ok());
    runs.push_back(r->fetches[0]);
  }
  return runs;
}

void CheckSameRuns(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("run " << i);
    CHECK(TensorsEqual(a[i], b[i]));
  }
}

Output Uniform(const Scope& s) { return ops::RandomUniform(s, {64}, DType::kFloat32); }

TEST_CASE("a graph's seed makes its unseeded random ops reproducible") {
  ApiEnv env;
  const auto a = ThreeRuns(env, Uniform, 1234), b = ThreeRuns(env, Uniform, 1234);
  CheckSameRuns(a, b);  // another graph built the same way, in a fresh session
  CHECK(!TensorsEqual(a[0], a[1]));  // a sequence, not one value repeated
  CHECK(!TensorsEqual(a[1], a[2]));
  CHECK(!TensorsEqual(a[0], ThreeRuns(env, Uniform, 4321)[0]));  // another graph seed
  CHECK(!TensorsEqual(a[0], ThreeRuns(env, Uniform, std::nullopt)[0]));
}

TEST_CASE("random ops without any seed draw differently in every session") {
  ApiEnv env;
  CHECK(!TensorsEqual(ThreeRuns(env, Uniform, std::nullopt)[0],
                      ThreeRuns(env, Uniform, std::nullopt)[0]));
}

TEST_CASE("an op seed alone is reproducible, and the graph's seed changes its draw") {
  ApiEnv env;
  auto seeded = [](const Scope& s) { return ops::RandomNormal(s, {64}, DType::kFloat64, 7); };
  const auto a = ThreeRuns(env, seeded, std::nullopt), b = ThreeRuns(env, seeded, std::nullopt);
  CheckSameRuns(a, b);
  CHECK(!TensorsEqual(a[0], a[1]));
  // (graph seed, 7) is another stream than (kDefaultGraphSeed, 7).
  CHECK(!TensorsEqual(a[0], ThreeRuns(env, seeded, 1)[0]));
}

TEST_CASE("unseeded random ops of one seeded graph draw streams of their own") {
  ApiEnv env;
  const Scope root = env.Root();
  root.SetRandomSeed(99);
  const Output u1 = Uniform(root), u2 = Uniform(root);
  const Output n1 = ops::TruncatedNormal(root, {64}, DType::kFloat32);
  const Output n2 = ops::TruncatedNormal(root, {64}, DType::kFloat32);
  auto out = env.Run(root, {}, {u1.name(), u2.name(), n1.name(), n2.name()});
  REQUIRE(out.ok());
  CHECK(!TensorsEqual((*out)[0], (*out)[1]));
  CHECK(!TensorsEqual((*out)[2], (*out)[3]));
}

TEST_CASE("RandomShuffle is seeded from the graph's seed") {
  ApiEnv env;
  std::vector<int64_t> rows(100);
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<int64_t>(i);
  auto shuffle = [&](const Scope& s) {
    return ops::RandomShuffle(s, ops::Const(s, Tensor::FromVector<int64_t>(rows)));
  };
  const auto a = ThreeRuns(env, shuffle, 5), b = ThreeRuns(env, shuffle, 5);
  CheckSameRuns(a, b);
  CHECK(!TensorsEqual(a[0], a[1]));
  CHECK(!TensorsEqual(a[0], ThreeRuns(env, shuffle, 6)[0]));
}

TEST_CASE("RandomUniformInt (the RNN example's data) is seeded from the graph's seed") {
  ApiEnv env;
  auto ints = [](const Scope& s) { return ops::RandomUniformInt(s, {64}, 0, 1000); };
  const auto a = ThreeRuns(env, ints, 5), b = ThreeRuns(env, ints, 5);
  CheckSameRuns(a, b);
  CHECK(!TensorsEqual(a[0], a[1]));
  CHECK(!TensorsEqual(a[0], ThreeRuns(env, ints, 6)[0]));
  // An op seed alone: TF1's (kDefaultGraphSeed, seed) attrs.
  const Scope root = env.Root();
  const Output r = ops::RandomUniformInt(root, {4}, 0, 10, 3);
  const GraphDef def = root.ToGraphDef();
  int found = 0;
  for (const NodeDef& n : def.nodes) {
    if (n.name != r.node) continue;
    ++found;
    CHECK(std::get<int64_t>(n.attrs.at("seed")) == kDefaultGraphSeed);
    CHECK(std::get<int64_t>(n.attrs.at("seed2")) == 3);
  }
  CHECK(found == 1);
}

// The (seed, seed2) attrs of an IdxDataset built after `before` nodes, with
// op seed `op_seed`, in a graph with seed `graph_seed`.
std::pair<int64_t, int64_t> DatasetSeeds(std::optional<int64_t> graph_seed,
                                         std::optional<int64_t> op_seed) {
  ApiEnv env;
  const Scope root = env.Root();
  if (graph_seed) root.SetRandomSeed(*graph_seed);
  ops::Const(root, 1.0f);
  const Output ds = ops::IdxDataset(root.WithOpName("data"),
                                    {.images_path = "i", .labels_path = "l", .seed = op_seed});
  const GraphDef def = root.ToGraphDef();
  for (const NodeDef& n : def.nodes) {
    if (n.name == ds.node) {
      return {std::get<int64_t>(n.attrs.at("seed")), std::get<int64_t>(n.attrs.at("seed2"))};
    }
  }
  FAIL("no dataset node");
  return {};
}

TEST_CASE("a dataset's shuffle seeds follow the graph's seed as Dataset.shuffle's do") {
  CHECK(DatasetSeeds(7, std::nullopt) == std::pair<int64_t, int64_t>{7, 1});
  CHECK(DatasetSeeds(8, std::nullopt) != DatasetSeeds(7, std::nullopt));
  CHECK(DatasetSeeds(std::nullopt, 3) == std::pair<int64_t, int64_t>{kDefaultGraphSeed, 3});
  CHECK(DatasetSeeds(7, 3) == std::pair<int64_t, int64_t>{7, 3});
  // Neither: the fixed order of seed 0, so that sharded workers agree.
  CHECK(DatasetSeeds(std::nullopt, std::nullopt) == std::pair<int64_t, int64_t>{0, 0});
}

// The initial values of variable "w" (and of partitioned "p"'s shards) in a
// fresh task, from a graph seeded with `graph_seed`.
std::vector<Tensor> InitialValues(int64_t graph_seed) {
  ApiEnv env;  // a task of its own: variables are shared by name within one
  const Scope root = env.Root();
  root.SetRandomSeed(graph_seed);
  ops::Variable w(root.WithOpName("w"), {4, 5}, DType::kFloat32, ops::Initializer::RandomNormal(1));
  ops::PartitionedVariable p(root.WithOpName("p"), {6, 3}, DType::kFloat32,
                             ops::Initializer::RandomUniform(0, 1), ops::FixedSizePartitioner(2));
  ops::GlobalVariablesInitializer(root.WithOpName("init"));
  REQUIRE(env.Run(root, {}, {}, {"init"}).ok());
  auto out = env.Run(root, {}, {"w", "p/part_0", "p/part_1"});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  return *out;
}

TEST_CASE("random initializers, partitioned ones too, are reproducible from the graph's seed") {
  const auto a = InitialValues(3), b = InitialValues(3), other = InitialValues(4);
  CheckSameRuns(a, b);
  CHECK(!TensorsEqual(a[0], other[0]));
  CHECK(!TensorsEqual(a[1], other[1]));
  CHECK(!TensorsEqual(a[1], a[2]));  // the shards have streams of their own
}

}  // namespace
}  // namespace tfd
