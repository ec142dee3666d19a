// CollectiveReduce among real tfd workers on loopback, each running its own
// session at the same time (between-graph replication without a ps): every
// worker gets the sum and the mean, instances in one step and across steps
// match, and a worker that never runs its part is named in the others'
// DEADLINE_EXCEEDED while their daemons go on serving.
#include <catch2/catch.hpp>

#include <functional>
#include <thread>
#include <vector>

#include "tests/integration/cluster_fixture.h"
#include "tests/integration/graph_helpers.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;
using testing::ConstOf;
using testing::LocalCluster;
using testing::Node;

constexpr int kWorkers = 3;

NodeDef Reduce(const std::string& name, const std::string& input, int64_t group_size,
               int64_t instance, const std::string& final_op) {
  return Node(name, "CollectiveReduce", {input}, "/job:worker",
              {{"T", DType::kFloat32},
               {"group_size", group_size},
               {"group_key", int64_t{1}},
               {"instance_key", instance},
               {"merge_op", std::string("Add")},
               {"final_op", final_op}});
}

// Worker k's graph: x = [k+1, 10(k+1), 100(k+1)]; "sum" and "mean" reduce
// it as two instances of one step.
GraphDef WorkerGraph(int k, int64_t group_size, int64_t first_instance) {
  const float f = static_cast<float>(k + 1);
  GraphDef g;
  g.nodes = {ConstOf("x", Tensor::FromVector<float>({f, 10 * f, 100 * f}), "/job:worker"),
             Reduce("sum", "x", group_size, first_instance, "Id"),
             Reduce("mean", "x", group_size, first_instance + 1, "Div")};
  return g;
}

// Runs `body` for each of workers [0, n) on a thread of its own, with a
// client of its own connected to that worker.
void OnWorkers(LocalCluster& cluster, int n,
               const std::function<void(int, Client&)>& body) {
  std::vector<std::thread> threads;
  for (int k = 0; k < n; ++k) {
    threads.emplace_back([&cluster, &body, k] {
      auto io = kj::setupAsyncIo();
      auto client = Client::Connect(io, cluster.Address("worker", k), "", 10s);
      if (client.ok()) body(k, **client);
    });
  }
  for (auto& t : threads) t.join();
}

std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
}

TEST_CASE("workers all-reduce through their own sessions; a missing one is named") {
  LocalCluster cluster({{"worker", kWorkers}});
  REQUIRE(cluster.StartAll().ok());

  // 1 + 2 + 3 = 6 of each element, and 2 as the mean; twice, as two steps.
  std::vector<std::vector<std::vector<float>>> got(kWorkers);
  std::vector<Status> failures(kWorkers);
  OnWorkers(cluster, kWorkers, [&](int k, Client& c) {
    Status s = c.CreateSession(WorkerGraph(k, kWorkers, 1));
    for (int step = 0; step < 2 && s.ok(); ++step) {
      auto out = c.Run({}, {"sum", "mean"}, {}, {.timeout = 20s});
      if (!out.ok()) {
        s = out.status();
        break;
      }
      got[k].push_back(Values(out->fetches[0]));
      got[k].push_back(Values(out->fetches[1]));
    }
    failures[k] = s;
  });
  for (int k = 0; k < kWorkers; ++k) {
    INFO("worker " << k << ": " << failures[k].ToString());
    REQUIRE(failures[k].ok());
    REQUIRE(got[k].size() == 4);
    for (int step = 0; step < 2; ++step) {
      CHECK(got[k][2 * step] == std::vector<float>{6, 60, 600});
      CHECK(got[k][2 * step + 1] == std::vector<float>{2, 20, 200});
    }
  }

  // Worker 2 never runs instance 10: the others' step deadline ends the
  // wait, naming it.
  OnWorkers(cluster, kWorkers - 1, [&](int k, Client& c) {
    Status s = c.CreateSession(WorkerGraph(k, kWorkers, 10));
    if (s.ok()) s = c.Run({}, {"sum"}, {}, {.timeout = 2s}).status();
    failures[k] = s;
  });
  for (int k = 0; k < kWorkers - 1; ++k) {
    INFO("worker " << k << ": " << failures[k].ToString());
    CHECK(failures[k].code() == Code::kDeadlineExceeded);
    CHECK(failures[k].message().find("never heard from /job:worker/replica:0/task:2") !=
          std::string::npos);
    CHECK(failures[k].message().find("instance_key 10") != std::string::npos);
  }

  // The daemons still serve: all three reduce a new instance.
  OnWorkers(cluster, kWorkers, [&](int k, Client& c) {
    Status s = c.CreateSession(WorkerGraph(k, kWorkers, 20));
    auto out = s.ok() ? c.Run({}, {"sum"}, {}, {.timeout = 20s}) : StatusOr<Client::RunOutput>(s);
    failures[k] = out.ok() && Values(out->fetches[0]) == std::vector<float>{6, 60, 600}
                      ? OkStatus()
                      : (out.ok() ? errors::Internal("wrong sum") : out.status());
  });
  for (int k = 0; k < kWorkers; ++k) {
    INFO("worker " << k << ": " << failures[k].ToString());
    CHECK(failures[k].ok());
  }
}

TEST_CASE("a worker outside the group is INVALID_ARGUMENT naming the node") {
  LocalCluster cluster({{"worker", 2}});
  REQUIRE(cluster.StartAll().ok());
  auto client = cluster.Connect("worker", 1);
  REQUIRE(client.ok());
  Status s = (*client)->CreateSession(WorkerGraph(1, 1, 1));
  if (s.ok()) s = (*client)->Run({}, {"sum"}, {}, {.timeout = 10s}).status();
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK(s.message().find("'sum'") != std::string::npos);
}

}  // namespace
}  // namespace tfd
