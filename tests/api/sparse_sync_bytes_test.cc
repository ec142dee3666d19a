// What a synchronous step of an embedding model costs on the wire, on real
// tfd processes (1 ps, 1 worker): the bytes the worker pushes to the ps per
// step, read from the worker's /metrics (tfd_data_plane_sent_bytes_total),
// grow with the ids of the batch times the row width and not with the
// table, which the ps sums as rows in a SparseConditionalAccumulator.
#include <catch2/catch.hpp>

#include <regex>
#include <sstream>

#include "api/embedding_ops.h"
#include "api/optimizers.h"
#include "api/placement.h"
#include "api/sync_replicas.h"
#include "api/train_signature.h"
#include "tests/api/api_test_util.h"
#include "tests/integration/cluster_fixture.h"
#include "tests/integration/log_lines.h"
#include "tests/integration/raw_socket.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;
using testing::LocalCluster;

constexpr int64_t kBatch = 32, kWidth = 16;

// An embedding table of `rows` on the ps, looked up by the fed "ids" and
// trained by synchronous SGD (one replica) on the sum of squares of the rows.
GraphDef EmbeddingGraph(int64_t rows) {
  const Scope root = Scope::NewRootScope(testing::AllOps())
                         .WithDeviceFunction(train::ReplicaDeviceSetter({.ps_tasks = 1}));
  ops::Variable step = ops::GlobalStep(root);
  // Named by size: variables are shared by name across the sessions.
  ops::Variable emb(root.WithOpName("emb" + std::to_string(rows)), {rows, kWidth}, DType::kFloat32,
                    ops::Initializer::Constant(0.5));
  const Output ids = ops::Placeholder(root.WithOpName("ids"), DType::kInt64, PartialShape({kBatch}));
  const Output looked_up = ops::EmbeddingLookup(root.WithOpName("lookup"), emb, ids);
  const train::GradientDescent sgd(0.01);
  train::SyncReplicas sync(sgd, {.replicas_to_aggregate = 1, .total_replicas = 1});
  sync.Minimize(root.WithOpName("train"), ops::Sum(root, ops::Square(root, looked_up), {0, 1}),
                step);
  ops::GlobalVariablesInitializer(root);
  INFO(root.status().ToString());
  REQUIRE(root.ok());
  return root.ToGraphDef();
}

// The HTTP port a task logged ("... over HTTP on 127.0.0.1:0 (port N)").
int HttpPort(const LocalCluster& cluster, const std::string& job) {
  auto lines = testing::WaitForLines([&] { return cluster.Log(job, 0); }, "over HTTP on", 1, 10s);
  REQUIRE(lines.size() == 1);
  std::smatch m;
  REQUIRE(std::regex_search(lines[0], m, std::regex(R"(\(port (\d+)\))")));
  return std::stoi(m[1]);
}

std::string Metrics(int port) {
  auto s = testing::RawSocket::Connect("127.0.0.1:" + std::to_string(port), 5s);
  REQUIRE(s.ok());
  REQUIRE((*s)->Send("GET /metrics HTTP/1.1\r\nHost: tfd\r\n\r\n"));
  (*s)->ShutdownWrite();
  auto text = (*s)->ReadUntilClosed(10s);
  REQUIRE(text.has_value());
  return *text;
}

// The value of the first sample on `page` whose line starts with `prefix`;
// 0 when there is none (a counter never incremented, a kind not held).
double Sample(const std::string& page, const std::string& prefix) {
  std::istringstream in(page);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0) return std::stod(line.substr(line.rfind(' ') + 1));
  }
  return 0;
}

// The bytes the task has pushed to the ps over the data plane so far.
double SentToPs(int port) {
  return Sample(Metrics(port), "tfd_data_plane_sent_bytes_total{peer=\"/job:ps/");
}

// Bytes per synchronous step the worker pushes to the ps, training a table
// of `rows` on the same batch; `ps_page` gets the ps's /metrics after.
double BytesPerStep(LocalCluster& cluster, int64_t rows, std::string* ps_page) {
  auto chief = cluster.Connect("worker", 0);
  REQUIRE(chief.ok());
  const Status created = (*chief)->CreateSession(EmbeddingGraph(rows));
  INFO(created.ToString());
  REQUIRE(created.ok());
  for (const std::string op : {"init", train::signature::kChiefInit}) {
    const Status s = (*chief)->Run({}, {}, {op}, {}).status();
    INFO(op << ": " << s.ToString());
    REQUIRE(s.ok());
  }
  std::vector<int64_t> batch;
  for (int64_t i = 0; i < kBatch; ++i) batch.push_back(i * 29 % 1000);  // distinct, < 1000
  const Tensor ids = Tensor::FromVector<int64_t>(batch);
  const auto step = [&] {
    const Status s = (*chief)->Run({{"ids", ids}}, {}, {train::signature::kChiefStep}, {}).status();
    INFO(s.ToString());
    REQUIRE(s.ok());
  };
  step();  // the first step registers the partitions
  const int port = HttpPort(cluster, "worker");
  const double before = SentToPs(port);
  constexpr int kSteps = 4;
  for (int i = 0; i < kSteps; ++i) step();
  *ps_page = Metrics(HttpPort(cluster, "ps"));
  return (SentToPs(port) - before) / kSteps;
}

TEST_CASE("a synchronous embedding step pushes the rows it touched, whatever the table's size") {
  LocalCluster cluster({{"ps", 1}, {"worker", 1}}, {"--http-listen", "127.0.0.1:0"});
  REQUIRE(cluster.StartAll().ok());
  std::string ps_page;
  const double small = BytesPerStep(cluster, 1000, &ps_page);
  const double large = BytesPerStep(cluster, 100000, &ps_page);
  INFO("bytes per step: " << small << " (1000 rows), " << large << " (100000 rows)");
  CHECK(std::abs(large - small) < 0.05 * small);
  // The rows (32 x 16 float32) and their ids (int64) twice at most — the
  // lookup's and the gradient's — plus a few small shapes and scalars.
  const double rows_bytes = kBatch * kWidth * 4;
  CHECK(large >= rows_bytes);
  CHECK(large <= rows_bytes + 2 * kBatch * 8 + 256);
  // The ps sums the gradients as rows: both tables' accumulators are sparse.
  CHECK(Sample(ps_page, "tfd_resources{kind=\"sparse_accumulator\"}") == 2);
  CHECK(Sample(ps_page, "tfd_resources{kind=\"accumulator\"}") == 0);
}

}  // namespace
}  // namespace tfd
