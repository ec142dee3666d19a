// The recurrent example (examples/rnn: a GRU on a while loop, the adding
// problem) trained by `tfctl train` on a real cluster of 1 ps task and 1
// worker: the variables on the ps, the loop and its gradient loop on the
// worker. Its loss must fall below half its first and below what predicting
// the targets' mean gives (1/6), which takes remembering the marked values.
#include <catch2/catch.hpp>

#include "examples/rnn/rnn_model.h"
#include "tests/integration/training_fixture.h"

namespace tfd::testing {
namespace {

TEST_CASE("the GRU of examples/rnn learns the adding problem on 1 ps and 1 worker") {
  constexpr int64_t kSteps = 100;
  TrainingCluster c(/*workers=*/1);
  OpRegistry registry;
  REQUIRE(kernels::RegisterAll(registry).ok());
  Scope root = Scope::NewRootScope(registry);
  const Status built = examples::BuildRnn(root, {.ps_tasks = 1,
                                                 .batch_size = 32,
                                                 .time_steps = 8,
                                                 .hidden = 16,
                                                 .max_steps = kSteps,
                                                 .eval_batch = 100});
  INFO(built.ToString());
  REQUIRE(built.ok());
  const std::string graph = c.work.path() + "/rnn.capnp";
  REQUIRE(WriteGraphFile(root, graph).ok());
  REQUIRE(c.cluster.StartAll().ok());
  const std::vector<Json> done = c.TrainAll(graph, 1);
  INFO(done[0].dump());
  CHECK(done[0]["stopped"] == "reached step " + std::to_string(kSteps));
  const double first = done[0]["first_loss"].get<double>(), last = done[0]["loss"].get<double>();
  CHECK(last < 0.5 * first);
  CHECK(last < 1.0 / 6);
  CHECK(done[0]["accuracy"].is_number());
}

}  // namespace
}  // namespace tfd::testing
