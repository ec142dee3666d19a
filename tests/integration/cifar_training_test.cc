// The CIFAR-10 ResNet example (examples/cifar) trained by `tfctl train` on a
// real cluster of 1 ps and 1 worker, on CIFAR-format records generated here
// (each class a colour, over noise): the loss of the last few steps, read
// from the trainer's event file, must be well below that of the first few.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "api/variables.h"
#include "examples/cifar/cifar_model.h"
#include "tests/integration/training_fixture.h"

namespace tfd::testing {
namespace {

constexpr int kCifarTrain = 480, kCifarTest = 100, kCifarBatch = 16;
constexpr int kEpochs = 2;
constexpr int kSteps = kEpochs * kCifarTrain / kCifarBatch;

// The colour of class k: a distinct (r, g, b), one of the corners and edges
// of the colour cube.
int Channel(int label, int channel) { return ((label + 1) >> channel & 1) * 160 + label * 8; }

// n records in CIFAR-10's binary format: class k is a square of its colour
// over uniform noise.
std::string CifarRecords(int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string out;
  for (int i = 0; i < n; ++i) {
    const int label = i % 10;
    out.push_back(static_cast<char>(label));
    for (int c = 0; c < 3; ++c) {
      for (int p = 0; p < 1024; ++p) {
        const int y = p / 32, x = p % 32;
        const bool inside = y >= 8 && y < 24 && x >= 8 && x < 24;
        const int noise = static_cast<int>(rng() % 64);
        out.push_back(static_cast<char>(inside ? Channel(label, c) + noise / 2 : noise));
      }
    }
  }
  return out;
}

double MeanOf(const std::vector<double>& v, size_t from, size_t count) {
  return std::accumulate(v.begin() + static_cast<long>(from),
                         v.begin() + static_cast<long>(from + count), 0.0) /
         static_cast<double>(count);
}

// Elements of every variable of `vars`, from their nodes' shape attrs.
int64_t Parameters(const Scope& root, const std::vector<ops::Variable>& vars) {
  int64_t total = 0;
  for (const ops::Variable& v : vars) {
    const int id = root.FindNode(v.name());
    REQUIRE(id >= 0);
    const auto& shape = std::get<PartialShape>(root.node(id).attrs.at("shape"));
    REQUIRE(shape.IsFullyDefined());
    int64_t n = 1;
    for (int64_t d : shape.dims()) n *= d;
    total += n;
  }
  return total;
}

TEST_CASE("--blocks 3 is He et al.'s ResNet-20: 0.27 M trainable parameters, all on the ps") {
  OpRegistry registry;
  REQUIRE(kernels::RegisterAll(registry).ok());
  Scope root = Scope::NewRootScope(registry);
  examples::CifarOptions o;
  o.blocks = 3;
  REQUIRE(examples::BuildCifar(root, o).ok());
  // Convolutions 432 + 13,824 + 51,200 + 204,800 (the two projections
  // included), batch norm's gamma and beta 1,568, the classifier 650.
  CHECK(Parameters(root, ops::TrainableVariables(root)) == 272474);
  // 21 batch norms (one per convolution, the projections' included) keep a
  // moving mean and variance;
  // the evaluation, which shares them, adds no variable.
  const auto all = ops::GlobalVariables(root);
  int moving = 0;
  for (const ops::Variable& v : all) {
    CHECK(v.info().device.rfind("/job:ps", 0) == 0);
    if (v.name().find("moving_") != std::string::npos) ++moving;
  }
  CHECK(moving == 2 * 21);
}

TEST_CASE("the CIFAR ResNet trains through a cluster: the loss falls") {
  TrainingCluster s(/*workers=*/1);
  s.data.Write("data_batch_1.bin", CifarRecords(kCifarTrain, 1));
  s.data.Write("test_batch.bin", CifarRecords(kCifarTest, 2));
  examples::CifarOptions o;
  o.batch_size = kCifarBatch;
  o.learning_rate = 0.02;  // batches of 16: well below the default for 128
  o.epochs = kEpochs;
  o.train_files = {"data_batch_1.bin"};
  o.test_batch = kCifarTest;
  o.eval_batch = kCifarTest;
  OpRegistry registry;
  REQUIRE(kernels::RegisterAll(registry).ok());
  Scope root = Scope::NewRootScope(registry);
  const Status built = examples::BuildCifar(root, o);
  INFO(built.ToString());
  REQUIRE(built.ok());
  const std::string graph = s.work.path() + "/cifar.capnp";
  REQUIRE(WriteGraphFile(root, graph).ok());

  REQUIRE(s.cluster.StartAll().ok());
  const std::string logdir = s.work.path() + "/events";
  const auto done = s.TrainAll(graph, 1, {"--logdir", logdir, "--summary-steps", "1"});
  INFO(done[0].dump());
  CHECK(done[0]["stopped"] == "input exhausted");
  CHECK(done[0]["step"] == kSteps);

  // Every step's loss, from the chief's event file as TensorBoard reads it.
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(logdir)) files.push_back(e.path());
  REQUIRE(files.size() == 1);
  const char* reader = std::getenv("READ_EVENTS");
  REQUIRE(reader != nullptr);
  auto read = RunProcess({"/usr/bin/python3", reader, files[0].string()}, 60s);
  REQUIRE(read.ok());
  INFO("read_events.py: " << OneLine(read->out + read->err));
  REQUIRE(read->exit_status == 0);
  const Json events = Json::parse(read->out);
  std::vector<double> losses;
  for (const Json& e : events["events"]) {
    losses.push_back(e["scalars"]["loss"].get<double>());
  }
  REQUIRE(losses.size() == kSteps);
  const double first = MeanOf(losses, 0, 5), last = MeanOf(losses, kSteps - 5, 5);
  INFO("mean loss of the first 5 steps " << first << ", of the last 5 " << last);
  CHECK(last < 0.5 * first);
  // The test file is classified with the moving averages batch norm kept.
  CHECK(done[0]["accuracy"].get<double>() > 0.8);
}

}  // namespace
}  // namespace tfd::testing
