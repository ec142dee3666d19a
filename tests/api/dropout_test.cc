// ops::Dropout: TF1's dropout on a seeded RandomUniform, so a graph gives the
// same masks in every session, from its op seed or from the graph's seed; the
// kept elements scaled by 1 / keep_prob;
// its gradient the same mask; a rate outside [0, 1) refused.
#include <catch2/catch.hpp>
#include <cmath>

#include "common/gradients.h"
#include "tests/api/api_test_util.h"

namespace tfd {
namespace {

using testing::ApiEnv;

constexpr int64_t kElements = 4000;
constexpr double kRate = 0.3;

// x = 1, 2, 3, ...: no element is 0, so a 0 in y is a dropped one.
Tensor Ramp() {
  std::vector<double> v(kElements);
  for (int64_t i = 0; i < kElements; ++i) v[i] = static_cast<double>(i + 1);
  return Tensor::FromVector<double>(v, TensorShape({40, kElements / 40}));
}

TEST_CASE("Dropout keeps each element with probability 1 - rate and scales it up") {
  ApiEnv env;
  const Scope root = env.Root();
  const Output x = ops::Const(root, Ramp());
  const Output y = ops::Dropout(root.WithOpName("y"), x, kRate, /*seed=*/7);
  auto g = AddGradients(root, {ops::Sum(root, y, {0, 1})}, {x});
  REQUIRE(g.ok());
  auto session = env.Session(root);
  auto out = session->Run({}, {y.name(), (*g)[0].name()}, {});
  REQUIRE(out.ok());
  const Tensor& yt = out->fetches[0];
  const Tensor& dx = out->fetches[1];
  int64_t kept = 0;
  for (int64_t i = 0; i < kElements; ++i) {
    const double v = yt.data<double>()[i];
    INFO("element " << i << ": " << v);
    if (v == 0) {
      CHECK(dx.data<double>()[i] == 0);  // the gradient drops what the forward dropped
      continue;
    }
    ++kept;
    CHECK(std::abs(v - (i + 1) / (1 - kRate)) <= 1e-12 * v);
    CHECK(std::abs(dx.data<double>()[i] - 1 / (1 - kRate)) <= 1e-12);
  }
  // 4000 draws: the kept share is 0.7 within 0.03 (over 4 standard
  // deviations) for this seed, and for all but a vanishing share of seeds.
  CHECK(std::abs(kept / static_cast<double>(kElements) - (1 - kRate)) < 0.03);
}

TEST_CASE("Dropout's masks are reproducible from its op seed") {
  ApiEnv env;
  auto masks = [&](int64_t seed) {
    const Scope root = env.Root();
    const Output y = ops::Dropout(root.WithOpName("y"), ops::Const(root, Ramp()), kRate, seed);
    auto session = env.Session(root);
    auto first = session->Run({}, {y.name()}, {});
    auto second = session->Run({}, {y.name()}, {});
    REQUIRE(first.ok());
    REQUIRE(second.ok());
    return std::make_pair(first->fetches[0], second->fetches[0]);
  };
  const auto a = masks(7), b = masks(7), other = masks(8);
  CHECK(TensorsEqual(a.first, b.first));    // a new session replays the seed's masks
  CHECK(TensorsEqual(a.second, b.second));
  CHECK(!TensorsEqual(a.first, a.second));  // each run draws a new mask
  CHECK(!TensorsEqual(a.first, other.first));
}

TEST_CASE("Dropout's masks are reproducible from the graph's seed alone") {
  ApiEnv env;
  auto masks = [&](int64_t graph_seed) {
    const Scope root = env.Root();
    root.SetRandomSeed(graph_seed);
    const Output y = ops::Dropout(root.WithOpName("y"), ops::Const(root, Ramp()), kRate);
    auto session = env.Session(root);
    auto first = session->Run({}, {y.name()}, {});
    auto second = session->Run({}, {y.name()}, {});
    REQUIRE(first.ok());
    REQUIRE(second.ok());
    return std::make_pair(first->fetches[0], second->fetches[0]);
  };
  const auto a = masks(11), b = masks(11), other = masks(12);
  CHECK(TensorsEqual(a.first, b.first));  // another graph, a fresh session: the same masks
  CHECK(TensorsEqual(a.second, b.second));
  CHECK(!TensorsEqual(a.first, a.second));
  CHECK(!TensorsEqual(a.first, other.first));
}

TEST_CASE("Dropout with rate 0 is x itself; a rate outside [0, 1) is an error") {
  ApiEnv env;
  const Scope root = env.Root();
  const Output x = ops::Const(root, Ramp());
  CHECK(ops::Dropout(root, x, 0).name() == x.name());
  for (double rate : {1.0, -0.1, std::nan("")}) {
    const Scope bad = env.Root();
    ops::Dropout(bad, ops::Const(bad, Ramp()), rate);
    INFO("rate " << rate);
    CHECK(bad.status().code() == Code::kInvalidArgument);
    CHECK(bad.status().message().find("rate") != std::string::npos);
  }
}

TEST_CASE("Dropout names its output after WithOpName and puts its helpers under it") {
  ApiEnv env;
  const Scope root = env.Root();
  const Output x = ops::Const(root, Ramp());
  const Output y = ops::Dropout(root.WithOpName("drop1"), x, kRate, /*seed=*/7);
  CHECK(y.name() == "drop1");
  const GraphDef def = root.ToGraphDef();
  int helpers = 0;
  for (const NodeDef& n : def.nodes) {
    if (n.op == "RandomUniform") CHECK(n.name.rfind("drop1/", 0) == 0);
    helpers += n.name.rfind("drop1/", 0) == 0 ? 1 : 0;
  }
  CHECK(helpers >= 3);  // RandomUniform, its shape, the mask
  // Unnamed, everything stays under "dropout/", as before.
  CHECK(ops::Dropout(root, x, kRate).name().rfind("dropout/", 0) == 0);
}

}  // namespace
}  // namespace tfd
