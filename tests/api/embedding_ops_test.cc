// Embedding lookups over partitioned tables (api/embedding_ops.h): "mod"
// and "div" against a gather of the whole table, the distinct ids only
// reaching the shards, the shards' gathers placed with the shards, ids out
// of the table refused by name, gradients, max_norm, the sparse combiners
// against a float64 reference, and string features hashed into buckets.
#include "api/embedding_ops.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "api/optimizers.h"
#include "api/placement.h"
#include "tests/api/api_test_util.h"

namespace tfd {
namespace {

using testing::ApiEnv;
using testing::CheckGradients;
using testing::RandomTensor;
using testing::ShapeMode;

constexpr int64_t kRows = 11, kCols = 3;

// The whole table: row r, column c holds 100 r + c.
double Cell(int64_t r, int64_t c) { return 100.0 * r + c; }

// The whole table cut into n shards as `strategy` lays it out: "div" in
// contiguous blocks (the first kRows % n one row longer), "mod" row r on
// shard r % n at row r / n. Written out here, not by the code under test.
std::vector<Tensor> Shards(const std::string& strategy, int n, DType dtype = DType::kFloat32) {
  std::vector<std::vector<double>> rows(n);
  const int64_t base = kRows / n, extras = kRows % n;
  for (int64_t r = 0; r < kRows; ++r) {
    int64_t shard = r % n;
    if (strategy == "div") {
      shard = r < extras * (base + 1) ? r / (base + 1) : extras + (r - extras * (base + 1)) / base;
    }
    for (int64_t c = 0; c < kCols; ++c) rows[shard].push_back(Cell(r, c));
  }
  std::vector<Tensor> out;
  for (const auto& v : rows) {
    const TensorShape shape({static_cast<int64_t>(v.size()) / kCols, kCols});
    if (dtype == DType::kFloat64) {
      out.push_back(Tensor::FromVector<double>(v, shape));
    } else {
      out.push_back(Tensor::FromVector<float>(std::vector<float>(v.begin(), v.end()), shape));
    }
  }
  return out;
}

Tensor Ids(DType dtype, const std::vector<int64_t>& ids, const TensorShape& shape) {
  if (dtype == DType::kInt64) return Tensor::FromVector<int64_t>(ids, shape);
  return Tensor::FromVector<int32_t>(std::vector<int32_t>(ids.begin(), ids.end()), shape);
}

std::vector<Output> ConstShards(const Scope& root, const std::vector<Tensor>& shards) {
  std::vector<Output> out;
  for (size_t i = 0; i < shards.size(); ++i) {
    out.push_back(ops::Const(root.WithOpName("shard_" + std::to_string(i)), shards[i]));
  }
  return out;
}

// Checks `got` is the whole table's rows for `ids`, of shape ids + [kCols].
void CheckRows(const Tensor& got, const std::vector<int64_t>& ids, const TensorShape& ids_shape) {
  std::vector<int64_t> dims = ids_shape.dims();
  dims.push_back(kCols);
  REQUIRE(got.shape() == TensorShape(dims));
  for (size_t i = 0; i < ids.size(); ++i) {
    for (int64_t c = 0; c < kCols; ++c) {
      INFO("id " << ids[i] << " at " << i << ", column " << c);
      CHECK(got.data<float>()[i * kCols + c] == static_cast<float>(Cell(ids[i], c)));
    }
  }
}

TEST_CASE("mod and div lookups give the whole table's rows for 1, 2, 3 and 5 shards") {
  struct Case {
    std::vector<int64_t> ids;
    TensorShape shape;
  };
  const std::vector<Case> cases = {
      {{3, 0, 3, 10, 7, 3}, TensorShape({6})},        // duplicates, the last row
      {{1, 9, 9, 4, 0, 0}, TensorShape({3, 2})},      // 2-D ids
      {{}, TensorShape({0})},                         // no ids
      {{5}, TensorShape({1, 1, 1})},
      {{8}, TensorShape({})},                         // one id: its row
  };
  for (const char* strategy : {"mod", "div"}) {
    for (int n : {1, 2, 3, 5}) {
      for (DType dtype : {DType::kInt32, DType::kInt64}) {
        INFO(strategy << " over " << n << " shards, " << DTypeName(dtype) << " ids");
        ApiEnv env;
        const Scope root = env.Root();
        const Output ids = ops::Placeholder(root.WithOpName("ids"), dtype);
        ops::EmbeddingLookup(root.WithOpName("lookup"), ConstShards(root, Shards(strategy, n)),
                             ids, {.partition_strategy = strategy});
        INFO(root.status().ToString());
        REQUIRE(root.ok());
        auto session = env.Session(root);
        for (const Case& c : cases) {
          auto out = session->Run({{"ids", Ids(dtype, c.ids, c.shape)}}, {"lookup"}, {});
          INFO(out.status().ToString());
          REQUIRE(out.ok());
          CheckRows(out->fetches[0], c.ids, c.shape);
        }
      }
    }
  }
}

TEST_CASE("the result's shape is the ids' shape and the row's, as far as the graph knows") {
  ApiEnv env;
  const Scope root = env.Root();
  const Output ids = ops::Placeholder(root.WithOpName("ids"), DType::kInt64, {-1, 4});
  const Output rows = ops::EmbeddingLookup(root, ConstShards(root, Shards("div", 3)), ids,
                                           {.partition_strategy = "div"});
  // Shards whose row counts the graph does not know, with rows of known shape.
  std::vector<Output> unsized;
  for (int i = 0; i < 2; ++i) {
    unsized.push_back(ops::Placeholder(root, DType::kFloat32, {-1, kCols}));
  }
  const Output more = ops::EmbeddingLookup(root, unsized, ids);
  REQUIRE(root.ok());
  CHECK(rows.shape == PartialShape({-1, 4, kCols}));
  CHECK(rows.node == "embedding_lookup");
  CHECK(more.shape == PartialShape({-1, 4, kCols}));
  CHECK(more.node == "embedding_lookup_1");
}

TEST_CASE("a partitioned variable looks up as its whole value; each gather sits with its shard") {
  ApiEnv env;
  const Scope root =
      env.Root().WithDeviceFunction(train::ReplicaDeviceSetter({.ps_tasks = 2}));
  std::vector<float> whole;
  for (int64_t r = 0; r < kRows; ++r) {
    for (int64_t c = 0; c < kCols; ++c) whole.push_back(static_cast<float>(Cell(r, c)));
  }
  ops::PartitionedVariable emb(
      root.WithOpName("emb"), {kRows, kCols}, DType::kFloat32,
      ops::Initializer::Value(Tensor::FromVector(whole, TensorShape({kRows, kCols}))),
      ops::FixedSizePartitioner(3));
  const Output ids = ops::Placeholder(root.WithOpName("ids"), DType::kInt64);
  ops::EmbeddingLookup(root.WithOpName("lookup"), emb, ids, {.partition_strategy = "div"});
  ops::GlobalVariablesInitializer(root.WithOpName("init"));
  INFO(root.status().ToString());
  REQUIRE(root.ok());

  // Each shard's value is read by exactly one Gather, on the shard's device.
  for (const auto& shard : emb.shards()) {
    int gathers = 0;
    for (int i = 0; i < root.num_nodes(); ++i) {
      const NodeDef& node = root.node(i);
      if (node.op != "Gather" || node.inputs[0] != shard.variable.value().name()) continue;
      ++gathers;
      CHECK(node.device == shard.variable.device());
    }
    CHECK(gathers == 1);
  }

  // The values, run in one process: without the devices, which name tasks.
  GraphDef graph = root.ToGraphDef();
  for (NodeDef& node : graph.nodes) node.device.clear();
  auto session = env.EmptySession();
  REQUIRE(session->Create(graph).ok());
  REQUIRE(session->Run({}, {}, {"init"}).ok());
  const std::vector<int64_t> want = {10, 0, 4, 4, 7, 3};
  auto out = session->Run({{"ids", Ids(DType::kInt64, want, TensorShape({2, 3}))}}, {"lookup"}, {});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CheckRows(out->fetches[0], want, TensorShape({2, 3}));
}

TEST_CASE("only the distinct ids of a batch reach the shards") {
  ApiEnv env;
  const Scope root = env.Root();
  const Output ids = ops::Placeholder(root.WithOpName("ids"), DType::kInt64);
  const std::vector<Output> shards = ConstShards(root, Shards("mod", 3));
  ops::EmbeddingLookup(root.WithOpName("lookup"), shards, ids);
  REQUIRE(root.ok());
  // What each shard's Gather is given: its ids, fetched from the step.
  std::vector<std::string> shard_ids;
  for (const Output& shard : shards) {
    for (int i = 0; i < root.num_nodes(); ++i) {
      const NodeDef& node = root.node(i);
      if (node.op == "Gather" && node.inputs[0] == shard.name()) shard_ids.push_back(node.inputs[1]);
    }
  }
  REQUIRE(shard_ids.size() == 3);
  std::vector<std::string> fetches = shard_ids;
  fetches.push_back("lookup");
  const std::vector<int64_t> batch = {4, 4, 1, 7, 7, 7, 0, 4};  // 4 distinct of 8
  auto out = env.Run(root, {{"ids", Ids(DType::kInt64, batch, TensorShape({8}))}}, fetches);
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  std::multiset<int64_t> rows;  // (shard, row) as shard * 100 + row
  for (int s = 0; s < 3; ++s) {
    const Tensor& t = (*out)[s];
    for (int64_t i = 0; i < t.num_elements(); ++i) rows.insert(s * 100 + t.data<int64_t>()[i]);
  }
  // 4 -> shard 1 row 1, 1 -> shard 1 row 0, 7 -> shard 1 row 2, 0 -> shard 0 row 0.
  CHECK(rows == std::multiset<int64_t>{0, 100, 101, 102});
  CheckRows((*out)[3], batch, TensorShape({8}));
}

TEST_CASE("an id outside the table is INVALID_ARGUMENT naming the node, the id and its place") {
  for (const char* strategy : {"mod", "div"}) {
    for (int n : {1, 3}) {
      INFO(strategy << " over " << n << " shards");
      ApiEnv env;
      const Scope root = env.Root();
      const Output ids = ops::Placeholder(root.WithOpName("ids"), DType::kInt64);
      ops::EmbeddingLookup(root.WithOpName("lookup"), ConstShards(root, Shards(strategy, n)),
                           ids, {.partition_strategy = strategy});
      REQUIRE(root.ok());
      auto session = env.Session(root);
      // 11 is the first id past the table; with "mod" over 3 shards -1 maps
      // to shard 2 and 12 to shard 0: the check is against the whole table.
      for (int64_t bad : {int64_t{-1}, kRows, kRows + 1, int64_t{1} << 40}) {
        INFO("id " << bad);
        auto out = session->Run(
            {{"ids", Ids(DType::kInt64, {0, 2, bad, 5}, TensorShape({2, 2}))}}, {"lookup"}, {});
        REQUIRE(out.status().code() == Code::kInvalidArgument);
        const std::string& m = out.status().message();
        INFO(m);
        CHECK(m.find("'lookup/ids_in_vocabulary'") != std::string::npos);
        CHECK(m.find("indices[1, 0] = " + std::to_string(bad) + " is not in [0, 11)") !=
              std::string::npos);
      }
    }
  }
}

TEST_CASE("int32 ids index a table of more than 2^31 rows") {
  // Shards of no columns stand in for a huge table: their rows cost nothing.
  const int64_t half = (int64_t{1} << 30) + 1;  // 2^31 + 2 rows in all
  ApiEnv env;
  const Scope root = env.Root();
  std::vector<Output> shards;
  for (int i = 0; i < 2; ++i) {
    shards.push_back(ops::Const(root, Tensor::FromVector<float>({}, TensorShape({half, 0}))));
  }
  const Output ids = ops::Placeholder(root.WithOpName("ids"), DType::kInt32);
  ops::EmbeddingLookup(root.WithOpName("lookup"), shards, ids, {.partition_strategy = "div"});
  REQUIRE(root.ok());
  auto session = env.Session(root);
  const int32_t last = std::numeric_limits<int32_t>::max();
  auto out = session->Run({{"ids", Tensor::FromVector<int32_t>({0, last, 1 << 30})}},
                          {"lookup"}, {});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK(out->fetches[0].shape() == TensorShape({3, 0}));
  auto bad = session->Run({{"ids", Tensor::FromVector<int32_t>({-1})}}, {"lookup"}, {});
  CHECK(bad.status().code() == Code::kInvalidArgument);
  CHECK(bad.status().message().find("is not in [0, 2147483650)") != std::string::npos);
}

TEST_CASE("bad lookups are errors of the scope naming the lookup") {
  auto error_of = [](const std::function<void(const Scope&)>& build) {
    const Scope root = Scope::NewRootScope(testing::AllOps());
    build(root);
    INFO(root.status().ToString());
    CHECK(root.status().code() == Code::kInvalidArgument);
    CHECK(root.status().message().find("'lookup'") != std::string::npos);
    return root.status().message();
  };
  auto ids = [](const Scope& s) { return ops::Const(s, Tensor::FromVector<int64_t>({1})); };
  auto shards = [](const Scope& s, const std::string& strategy, int n) {
    return ConstShards(s, Shards(strategy, n));
  };
  CHECK(error_of([&](const Scope& s) {
          ops::EmbeddingLookup(s.WithOpName("lookup"), shards(s, "mod", 2), ids(s),
                               {.partition_strategy = "range"});
        }).find("'range'") != std::string::npos);
  error_of([&](const Scope& s) {
    ops::EmbeddingLookup(s.WithOpName("lookup"), shards(s, "mod", 2),
                         ops::Const(s, Tensor::FromVector<float>({1})));
  });
  error_of([&](const Scope& s) {
    ops::EmbeddingLookup(s.WithOpName("lookup"), std::vector<Output>{}, ids(s));
  });
  error_of([&](const Scope& s) {
    ops::EmbeddingLookup(s.WithOpName("lookup"), shards(s, "mod", 2), ids(s), {.max_norm = 0.0});
  });
  // 11 rows in 3 shards are 4, 4 and 3 for either strategy, not 5, 3 and 3.
  CHECK(error_of([&](const Scope& s) {
          std::vector<Output> uneven = {
              ops::Const(s, Tensor::FromVector<float>(std::vector<float>(15), TensorShape({5, 3}))),
              ops::Const(s, Tensor::FromVector<float>(std::vector<float>(9), TensorShape({3, 3}))),
              ops::Const(s, Tensor::FromVector<float>(std::vector<float>(9), TensorShape({3, 3})))};
          ops::EmbeddingLookup(s.WithOpName("lookup"), uneven, ids(s));
        }).find("shard 0") != std::string::npos);
  CHECK(error_of([&](const Scope& s) {
          const ops::SparseTensor sp{
              ops::Const(s, Tensor::FromVector<int64_t>({0, 0}, TensorShape({1, 2}))), ids(s),
              ops::Const(s, Tensor::FromVector<int64_t>({1, 1}))};
          ops::EmbeddingLookupSparse(s.WithOpName("lookup"), shards(s, "mod", 2), sp,
                                     std::nullopt, "max");
        }).find("'max'") != std::string::npos);
}

TEST_CASE("the lookup's gradient is the dense gradient, duplicates summed, per shard") {
  const Tensor ids = Tensor::FromVector<int64_t>({4, 0, 4, 10, 5, 4}, TensorShape({3, 2}));
  for (const char* strategy : {"mod", "div"}) {
    for (int n : {1, 3}) {
      std::vector<Tensor> shards;
      for (int s = 0; s < n; ++s) {
        const int64_t rows = kRows / n + (s < kRows % n ? 1 : 0);
        shards.push_back(RandomTensor({rows, 2}, 70 + s));
      }
      for (ShapeMode mode : {ShapeMode::kKnown, ShapeMode::kUnknownDims}) {
        CheckGradients(std::string(strategy) + " over " + std::to_string(n) + " shards",
                       [&](const Scope& s, const std::vector<Output>& x) {
                         return ops::EmbeddingLookup(s, x, ops::Const(s, ids),
                                                     {.partition_strategy = strategy});
                       },
                       shards, mode);
      }
    }
  }
  // Rows clipped to max_norm 0.5 (random rows of 2 in [-1, 1) mostly exceed it).
  CheckGradients("max_norm", [&](const Scope& s, const std::vector<Output>& x) {
    return ops::EmbeddingLookup(s, x, ops::Const(s, ids), {.max_norm = 0.5});
  }, {RandomTensor({6, 2}, 80), RandomTensor({5, 2}, 81)});
}

TEST_CASE("gradient descent through a lookup moves each looked-up row by its count") {
  ApiEnv env;
  const Scope root = env.Root();
  ops::PartitionedVariable emb(root.WithOpName("emb"), {kRows, kCols}, DType::kFloat32,
                               ops::Initializer::Zeros(), ops::FixedSizePartitioner(3));
  const Tensor ids = Tensor::FromVector<int64_t>({4, 0, 4, 10, 4, 0}, TensorShape({2, 3}));
  for (const char* strategy : {"mod", "div"}) {
    const Output rows = ops::EmbeddingLookup(root, emb, ops::Const(root, ids),
                                             {.partition_strategy = strategy});
    train::GradientDescent(0.5).Minimize(root.WithOpName(std::string("train_") + strategy),
                                       ops::Sum(root, rows, {0, 1, 2}));
  }
  ops::GlobalVariablesInitializer(root.WithOpName("init"));
  INFO(root.status().ToString());
  REQUIRE(root.ok());
  auto session = env.Session(root);
  REQUIRE(session->Run({}, {}, {"init"}).ok());
  // Row 4 is looked up 3 times, row 0 twice, row 10 once: d(sum)/d(row) is
  // the count in every column.
  const std::map<int64_t, float> counts = {{4, 3.0f}, {0, 2.0f}, {10, 1.0f}};
  for (const char* strategy : {"mod", "div"}) {
    INFO(strategy);
    REQUIRE(session->Run({}, {}, {std::string("train_") + strategy}).ok());
    const int64_t n = 3;
    for (int s = 0; s < 3; ++s) {
      auto value = session->Run({}, {emb.shards()[s].variable.value().name()}, {});
      REQUIRE(value.ok());
      const Tensor& t = value->fetches[0];
      for (int64_t local = 0; local < t.dim(0); ++local) {
        // The row of the whole table this shard row holds under `strategy`.
        const int64_t row = std::string(strategy) == "mod" ? local * n + s
                                                           : emb.shards()[s].first_row + local;
        const auto it = counts.find(row);
        const float want = it == counts.end() ? 0.0f : -0.5f * it->second;
        for (int64_t c = 0; c < kCols; ++c) {
          INFO("shard " << s << " row " << local);
          CHECK(t.data<float>()[local * kCols + c] == want);
        }
      }
    }
    REQUIRE(session->Run({}, {}, {"init"}).ok());
  }
}

TEST_CASE("max_norm scales rows longer than it down to it and leaves the others") {
  ApiEnv env;
  const Scope root = env.Root();
  // Rows (3, 4) of norm 5, (0.3, 0.4) of norm 0.5, zeros.
  const Output table = ops::Const(root, Tensor::FromVector<float>(
                                            {3, 4, 0.3f, 0.4f, 0, 0}, TensorShape({3, 2})));
  const Output more = ops::Const(
      root, Tensor::FromVector<float>(std::vector<float>(6, 9), TensorShape({3, 2})));
  const std::vector<Output> shards = {table, more};
  ops::EmbeddingLookup(root.WithOpName("lookup"), shards,
                       ops::Const(root, Tensor::FromVector<int32_t>({0, 1, 2})),
                       {.partition_strategy = "div", .max_norm = 1.0});
  REQUIRE(root.ok());
  auto out = env.Run(root, {}, {"lookup"});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  const Tensor& t = (*out)[0];
  REQUIRE(t.shape() == TensorShape({3, 2}));
  CHECK(t.data<float>()[0] == Approx(0.6));
  CHECK(t.data<float>()[1] == Approx(0.8));
  CHECK(t.data<float>()[2] == 0.3f);
  CHECK(t.data<float>()[3] == 0.4f);
  CHECK(t.data<float>()[4] == 0);  // the zero row stays zero, not NaN
  CHECK(t.data<float>()[5] == 0);
}

// A batch of 5 rows of multi-valued features: row 0 holds ids 1 and 3,
// row 1 none, row 2 ids 3, 3 and 0, row 3 id 10, row 4 (the last) none.
struct SparseBatch {
  std::vector<int64_t> rows = {0, 0, 2, 2, 2, 3};
  std::vector<int64_t> ids = {1, 3, 3, 3, 0, 10};
  std::vector<double> weights = {2, 0.5, 1, -0.25, 3, 0.75};

  ops::SparseTensor Of(const Scope& s, const Tensor& values) const {
    std::vector<int64_t> indices;
    for (size_t i = 0; i < rows.size(); ++i) {
      indices.push_back(rows[i]);
      indices.push_back(i == 0 || rows[i - 1] != rows[i] ? 0 : indices[2 * i - 1] + 1);
    }
    const int64_t n = static_cast<int64_t>(rows.size());
    return {ops::Const(s, Tensor::FromVector<int64_t>(indices, TensorShape({n, 2}))),
            ops::Const(s, values), ops::Const(s, Tensor::FromVector<int64_t>({5, 3}))};
  }

  // Row b of the combination, in float64 from the whole table; 4 rows,
  // the empty row 1 zeros.
  std::vector<double> Reference(const std::string& combiner, bool weighted) const {
    std::vector<double> out(4 * kCols, 0);
    for (int64_t b = 0; b < 4; ++b) {
      double norm = 0, squares = 0;
      for (size_t i = 0; i < ids.size(); ++i) {
        if (rows[i] != b) continue;
        const double w = weighted ? weights[i] : 1;
        for (int64_t c = 0; c < kCols; ++c) out[b * kCols + c] += w * Cell(ids[i], c);
        norm += w;
        squares += w * w;
      }
      const double divisor = combiner == "mean" ? norm : std::sqrt(squares);
      if (combiner == "sum" || norm == 0) continue;
      for (int64_t c = 0; c < kCols; ++c) out[b * kCols + c] /= divisor;
    }
    return out;
  }
};

TEST_CASE("sparse lookups combine each batch row as TensorFlow does, weighted or not") {
  const SparseBatch batch;
  for (const char* combiner : {"sum", "mean", "sqrtn"}) {
    for (bool weighted : {false, true}) {
      for (DType dtype : {DType::kInt32, DType::kInt64}) {
        INFO(combiner << (weighted ? ", weighted, " : ", unweighted, ") << DTypeName(dtype));
        ApiEnv env;
        const Scope root = env.Root();
        const ops::SparseTensor ids = batch.Of(root, Ids(dtype, batch.ids, TensorShape({6})));
        std::optional<ops::SparseTensor> weights;
        if (weighted) weights = batch.Of(root, Tensor::FromVector<double>(batch.weights));
        ops::EmbeddingLookupSparse(root.WithOpName("combined"),
                                   ConstShards(root, Shards("mod", 2, DType::kFloat64)), ids,
                                   weights, combiner);
        INFO(root.status().ToString());
        REQUIRE(root.ok());
        auto out = env.Run(root, {}, {"combined"});
        INFO(out.status().ToString());
        REQUIRE(out.ok());
        const Tensor& got = (*out)[0];
        // Rows up to the last with ids: row 4 of the batch has no row here.
        REQUIRE(got.shape() == TensorShape({4, kCols}));
        const std::vector<double> want = batch.Reference(combiner, weighted);
        for (size_t i = 0; i < want.size(); ++i) {
          INFO("element " << i);
          CHECK(got.data<double>()[i] == Approx(want[i]).epsilon(1e-12));
        }
      }
    }
  }
}

TEST_CASE("the gradient of a sparse lookup is the dense gradient, weighted or not") {
  const SparseBatch batch;
  for (const char* combiner : {"sum", "mean", "sqrtn"}) {
    for (bool weighted : {false, true}) {
      CheckGradients(std::string(weighted ? "weighted " : "") + combiner,
                     [&](const Scope& s, const std::vector<Output>& x) {
                       std::optional<ops::SparseTensor> w;
                       if (weighted) w = batch.Of(s, Tensor::FromVector<double>(batch.weights));
                       return ops::EmbeddingLookupSparse(
                           s, x, batch.Of(s, Tensor::FromVector<int64_t>(batch.ids)), w,
                           combiner, {.partition_strategy = "div"});
                     },
                     {RandomTensor({6, 2}, 90), RandomTensor({5, 2}, 91)});
    }
  }
}

TEST_CASE("string features hash into TensorFlow's buckets and look up as those ids") {
  ApiEnv env;
  const Scope root = env.Root();
  const Output words = ops::Placeholder(root.WithOpName("words"), DType::kString);
  const Output buckets = ops::StringToHashBucketFast(root.WithOpName("buckets"), words, 10);
  ops::EmbeddingLookup(root.WithOpName("lookup"), ConstShards(root, Shards("mod", 2)), buckets);
  REQUIRE(root.ok());
  CHECK(buckets.dtype == DType::kInt64);
  const Tensor batch =
      Tensor::FromVector<std::string>({"a", "b", "c", "d"}, TensorShape({2, 2}));
  auto out = env.Run(root, {{"words", batch}}, {"buckets", "lookup"});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  // TensorFlow's string_to_hash_bucket_op_test: Fingerprint64 % 10.
  const std::vector<int64_t> want = {9, 2, 2, 5};
  const Tensor& got = (*out)[0];
  REQUIRE(got.shape() == TensorShape({2, 2}));
  CHECK(std::vector<int64_t>(got.data<int64_t>(), got.data<int64_t>() + 4) == want);
  CheckRows((*out)[1], want, TensorShape({2, 2}));
}

}  // namespace
}  // namespace tfd
