// The recurrent example (examples/rnn): its GRU's gradient through the while
// loop checked against central differences on a tiny case, and the example's
// own graph trained in one process, its loss falling below what predicting
// the mean gives (which needs the cell to remember the marked values).
#include <catch2/catch.hpp>

#include <numeric>
#include <vector>

#include "examples/rnn/rnn_model.h"
#include "tests/api/api_test_util.h"

namespace tfd {
namespace {

using testing::CheckGradients;
using testing::RandomTensor;

TEST_CASE("the GRU's gradient through its while loop matches finite differences") {
  // batch 2, 3 time steps, 2 features, 3 units; every weight and the inputs.
  const int64_t f = 2, h = 3;
  std::vector<Tensor> xs;
  for (int gate = 0; gate < 3; ++gate) {
    xs.push_back(RandomTensor({f, h}, 10 * gate + 1, -0.8, 0.8));
    xs.push_back(RandomTensor({h, h}, 10 * gate + 2, -0.8, 0.8));
    xs.push_back(RandomTensor({h}, 10 * gate + 3, -0.5, 0.5));
  }
  xs.push_back(RandomTensor({2, 3, f}, 99, -1, 1));
  CheckGradients("GRU over 3 steps",
                 [](const Scope& s, const std::vector<Output>& in) {
                   const std::vector<Output> weights(in.begin(), in.begin() + 9);
                   return examples::DynamicGru(s, weights, in[9]);
                 },
                 xs);
}

// Nine GRU weights (features f, units h) and inputs [batch, time, f], float64.
std::vector<Tensor> GruInputs(int64_t f, int64_t h, int64_t batch, int64_t time) {
  std::vector<Tensor> xs;
  for (int gate = 0; gate < 3; ++gate) {
    xs.push_back(RandomTensor({f, h}, 10 * gate + 1, -0.8, 0.8));
    xs.push_back(RandomTensor({h, h}, 10 * gate + 2, -0.8, 0.8));
    xs.push_back(RandomTensor({h}, 10 * gate + 3, -0.5, 0.5));
  }
  xs.push_back(RandomTensor({batch, time, f}, 98, -1, 1));
  return xs;
}

TEST_CASE("a GRU over sequences of given lengths stops each at its end, its gradient through "
          "the cond that skips the cell") {
  // 5 steps; lengths 3, 1, 2: sequence 1 keeps its state after step 0, and
  // steps 3 and 4 (past the longest) skip the cell.
  const std::vector<int32_t> lengths{3, 1, 2};
  auto lengths_of = [&](const Scope& s) {
    return ops::Const(s, Tensor::FromVector<int32_t>(lengths, TensorShape{3}));
  };
  const std::vector<Tensor> xs = GruInputs(2, 3, 3, 5);
  CheckGradients("GRU over lengths 3, 1, 2 of 5 steps",
                 [&](const Scope& s, const std::vector<Output>& in) {
                   const std::vector<Output> weights(in.begin(), in.begin() + 9);
                   return examples::DynamicGru(s, weights, in[9], lengths_of(s));
                 },
                 xs);
  // Each sequence's state is that of the GRU over its own steps alone.
  testing::ApiEnv env;
  const Scope root = env.Root();
  std::vector<Output> weights;
  for (int k = 0; k < 9; ++k) weights.push_back(ops::Const(root, xs[k]));
  const Output inputs = ops::Const(root, xs[9]);
  const Output masked = examples::DynamicGru(root, weights, inputs, lengths_of(root));
  std::vector<std::string> fetches{masked.name()};
  for (int i = 0; i < 3; ++i) {
    const Output own = ops::Slice(root, inputs, {i, 0, 0}, {1, lengths[i], 2});
    fetches.push_back(examples::DynamicGru(root, weights, own).name());
  }
  auto out = env.Run(root, {}, fetches);
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  REQUIRE((*out)[0].shape() == TensorShape{3, 3});
  for (int i = 0; i < 3; ++i) {
    REQUIRE((*out)[i + 1].shape() == TensorShape{1, 3});
    for (int u = 0; u < 3; ++u) {
      INFO("sequence " << i << ", unit " << u);
      CHECK((*out)[0].data<double>()[3 * i + u] == Approx((*out)[i + 1].data<double>()[u]));
    }
  }
}

TEST_CASE("a GRU given the wrong number of weights is an error of the scope") {
  Scope root = Scope::NewRootScope(testing::AllOps());
  const Output x = ops::Placeholder(root, DType::kFloat32);
  examples::DynamicGru(root, {x, x}, x);
  REQUIRE(root.status().code() == Code::kInvalidArgument);
  CHECK_THAT(root.status().message(), Catch::Contains("9 weights"));
}

float Mean(const std::vector<float>& v, size_t from, size_t n) {
  return std::accumulate(v.begin() + from, v.begin() + from + n, 0.0f) / static_cast<float>(n);
}

// Trains the example's graph with `o` for 80 steps in one process; returns
// the mean loss of the first 5 steps and of the last 5.
std::pair<float, float> Train(const examples::RnnOptions& o) {
  testing::ApiEnv env;
  const Scope root = env.Root();
  const Status built = examples::BuildRnn(root, o);
  INFO(built.ToString());
  REQUIRE(built.ok());
  auto session = env.Session(root);
  REQUIRE(session->Run({}, {}, {"init"}).ok());
  std::vector<float> losses;
  for (int step = 0; step < 80; ++step) {
    auto r = session->Run({}, {"loss"}, {"train"});
    INFO("step " << step << ": " << r.status().ToString());
    REQUIRE(r.ok());
    losses.push_back(r->fetches[0].scalar<float>());
  }
  return {Mean(losses, 0, 5), Mean(losses, losses.size() - 5, 5)};
}

examples::RnnOptions SmallRnn() {
  examples::RnnOptions o;
  o.ps_tasks = 0;
  o.batch_size = 32;
  o.time_steps = 8;
  o.hidden = 16;
  o.eval_batch = 100;
  return o;
}

TEST_CASE("the RNN example learns the adding problem in one process") {
  const auto [first, last] = Train(SmallRnn());
  INFO("mean loss of the first 5 steps " << first << ", of the last 5 " << last);
  CHECK(last < 0.5f * first);
  // Predicting 1, the targets' mean, leaves 1/6: below it the cell remembers.
  CHECK(last < 1.0f / 6);
}

TEST_CASE("the RNN example learns the adding problem over sequences of varying length") {
  examples::RnnOptions o = SmallRnn();
  o.min_length = 5;  // 5 to 8 steps of 8, the rest padding the GRU must skip
  const auto [first, last] = Train(o);
  INFO("mean loss of the first 5 steps " << first << ", of the last 5 " << last);
  CHECK(last < 0.5f * first);
  CHECK(last < 1.0f / 6);
}

TEST_CASE("the RNN example's options are checked, naming the flag") {
  examples::RnnOptions o;
  o.time_steps = 1;
  const Status s = examples::CheckRnnOptions(o);
  REQUIRE(s.code() == Code::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("--time-steps"));
  for (int64_t min_length : {6, 13}) {  // of 12 steps: the second half would be empty, or past
    o.time_steps = 12;
    o.min_length = min_length;
    const Status m = examples::CheckRnnOptions(o);
    REQUIRE(m.code() == Code::kInvalidArgument);
    CHECK_THAT(m.message(), Catch::Contains("--min-length"));
  }
}

}  // namespace
}  // namespace tfd
