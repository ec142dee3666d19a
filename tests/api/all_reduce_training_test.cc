// Synchronous training without a ps (api/all_reduce_training.h) on real tfd
// workers: each holds its own replica, trains on its own batch, and after
// every step both replicas hold the same bits, equal to SGD on the mean of
// the two workers' gradients computed here in float64.
#include <catch2/catch.hpp>

#include <array>
#include <functional>
#include <thread>
#include <vector>

#include "api/all_reduce_training.h"
#include "tests/api/api_test_util.h"
#include "tests/integration/cluster_fixture.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;
using ops::Initializer;
using ops::Variable;

constexpr int kWorkers = 2;
constexpr int kBatch = 4;
constexpr int kSteps = 5;
constexpr double kRate = 0.1;

// loss = mean((x w + b - y)^2), x [4, 2]; w seeded, so both replicas start equal.
GraphDef Regression() {
  const Scope root = Scope::NewRootScope(testing::AllOps()).WithDevice("/job:worker");
  const Output x = ops::Placeholder(root.WithOpName("x"), DType::kFloat32, {kBatch, 2});
  const Output y = ops::Placeholder(root.WithOpName("y"), DType::kFloat32, {kBatch, 1});
  Variable w(root.WithOpName("w"), {2, 1}, DType::kFloat32, Initializer::RandomNormal(1.0, 7));
  Variable b(root.WithOpName("b"), {1}, DType::kFloat32, Initializer::Zeros());
  const Output err = ops::Sub(root, ops::Add(root, ops::MatMul(root, x, w), b), y);
  const Output loss = ops::Mean(root.WithOpName("loss"), ops::Square(root, err), {0, 1});
  train::AllReduceMinimize(root.WithOpName("train"), train::GradientDescent(kRate), loss,
                           {.group_size = kWorkers});
  ops::GlobalVariablesInitializer(root);
  INFO(root.status().ToString());
  REQUIRE(root.ok());
  return root.ToGraphDef();
}

// Worker k's batch: rows differ between workers, so do their gradients.
std::vector<float> Xs(int k) {
  std::vector<float> v;
  for (int i = 0; i < kBatch * 2; ++i) v.push_back(0.25f * static_cast<float>(i + 3 * k) - 1);
  return v;
}
std::vector<float> Ys(int k) { return {1.0f + k, -0.5f, 2.0f * k, 0.75f}; }

struct Params {
  std::array<double, 2> w;
  double b;
};

// kSteps of SGD on the mean of the workers' gradients, in float64.
Params Reference(Params p) {
  for (int step = 0; step < kSteps; ++step) {
    Params mean{{0, 0}, 0};
    for (int k = 0; k < kWorkers; ++k) {
      const std::vector<float> x = Xs(k), y = Ys(k);
      for (int i = 0; i < kBatch; ++i) {
        const double r = x[2 * i] * p.w[0] + x[2 * i + 1] * p.w[1] + p.b - y[i];
        const double g = 2 * r / kBatch / kWorkers;
        mean.w[0] += g * x[2 * i];
        mean.w[1] += g * x[2 * i + 1];
        mean.b += g;
      }
    }
    p = {{p.w[0] - kRate * mean.w[0], p.w[1] - kRate * mean.w[1]}, p.b - kRate * mean.b};
  }
  return p;
}

std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
}

TEST_CASE("replicas that all-reduce their gradients stay equal and follow the mean gradient") {
  testing::LocalCluster cluster({{"worker", kWorkers}});
  REQUIRE(cluster.StartAll().ok());
  const GraphDef graph = Regression();

  // [worker] -> w0, w1, b before training, then after it.
  std::array<std::vector<float>, kWorkers> before, after;
  std::array<Status, kWorkers> failures;
  std::vector<std::thread> threads;
  for (int k = 0; k < kWorkers; ++k) {
    threads.emplace_back([&, k] {
      auto io = kj::setupAsyncIo();
      auto client = Client::Connect(io, cluster.Address("worker", k), "", 10s);
      Status s = client.status();
      if (s.ok()) s = (*client)->CreateSession(graph);
      if (s.ok()) s = (*client)->Run({}, {}, {"init"}, {}).status();
      auto read = [&](std::vector<float>& into) {
        auto out = (*client)->Run({}, {"w/read", "b/read"}, {}, {.timeout = 20s});
        if (!out.ok()) return out.status();
        into = Values(out->fetches[0]);
        into.push_back(out->fetches[1].data<float>()[0]);
        return Status();
      };
      if (s.ok()) s = read(before[k]);
      const Client::Feeds feeds{{"x", Tensor::FromVector<float>(Xs(k), TensorShape{kBatch, 2})},
                                {"y", Tensor::FromVector<float>(Ys(k), TensorShape{kBatch, 1})}};
      for (int step = 0; step < kSteps && s.ok(); ++step)
        s = (*client)->Run(feeds, {}, {"train"}, {.timeout = 20s}).status();
      if (s.ok()) s = read(after[k]);
      failures[k] = s;
    });
  }
  for (auto& t : threads) t.join();
  for (int k = 0; k < kWorkers; ++k) {
    INFO("worker " << k << ": " << failures[k].ToString());
    REQUIRE(failures[k].ok());
  }

  CHECK(before[0] == before[1]);  // the seeded initializer drew the same values
  CHECK(after[0] == after[1]);    // every replica applied the same mean
  const Params want = Reference({{before[0][0], before[0][1]}, before[0][2]});
  CHECK(after[0][0] == Approx(want.w[0]).margin(1e-5));
  CHECK(after[0][1] == Approx(want.w[1]).margin(1e-5));
  CHECK(after[0][2] == Approx(want.b).margin(1e-5));
  CHECK(after[0] != before[0]);
}

}  // namespace
}  // namespace tfd
