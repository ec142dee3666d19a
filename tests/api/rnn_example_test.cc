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

TEST_CASE("the RNN example learns the adding problem in one process") {
  examples::RnnOptions o;
  o.ps_tasks = 0;
  o.batch_size = 32;
  o.time_steps = 8;
  o.hidden = 16;
  o.eval_batch = 100;
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
  const float first = Mean(losses, 0, 5), last = Mean(losses, losses.size() - 5, 5);
  INFO("mean loss of the first 5 steps " << first << ", of the last 5 " << last);
  CHECK(last < 0.5f * first);
  // Predicting 1, the targets' mean, leaves 1/6: below it the cell remembers.
  CHECK(last < 1.0f / 6);
}

TEST_CASE("the RNN example's options are checked, naming the flag") {
  examples::RnnOptions o;
  o.time_steps = 1;
  const Status s = examples::CheckRnnOptions(o);
  REQUIRE(s.code() == Code::kInvalidArgument);
  CHECK_THAT(s.message(), Catch::Contains("--time-steps"));
}

}  // namespace
}  // namespace tfd
