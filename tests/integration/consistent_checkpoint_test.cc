// A checkpoint of two ps tasks is one cut of the training: every step's
// updates are in all of its files or in none. Each step of this graph adds
// 1 to `global_step` on ps:0 and to `mirror` on ps:1; two workers step as
// fast as they can while the test saves again and again, and in every
// checkpoint the two counters must be equal (a save that took ps:0 before a
// step and ps:1 after it would hold mirror = global_step + 1). The file's
// name must be the step it holds.
#include <catch2/catch.hpp>

#include <atomic>
#include <filesystem>
#include <set>
#include <thread>

#include "common/tensor_bundle/checkpoint_file.h"
#include "tests/integration/child_process.h"
#include "tests/integration/cluster_fixture.h"
#include "tests/integration/temp_dir.h"

namespace tfd::testing {
namespace {

using namespace std::chrono_literals;

constexpr const char* kPs0 = "/job:ps/replica:0/task:0";
constexpr const char* kPs1 = "/job:ps/replica:0/task:1";

NodeDef Node(std::string name, std::string op, std::vector<std::string> inputs, std::string device,
             AttrMap attrs = {}) {
  return NodeDef{std::move(name), std::move(op), std::move(inputs), std::move(device),
                 std::move(attrs)};
}

NodeDef Counter(std::string name, std::string device) {
  return Node(std::move(name), "VariableV2", {}, std::move(device),
              {{"dtype", DType::kInt64}, {"shape", PartialShape(std::vector<int64_t>{})}});
}

NodeDef Int64Const(std::string name, int64_t v, std::string device) {
  return Node(std::move(name), "Const", {}, std::move(device),
              {{"value", Tensor::Scalar<int64_t>(v)}, {"dtype", DType::kInt64}});
}

// global_step on ps:0 and mirror on ps:1, both set to 0 by `init` and moved
// by 1 each by `train` (run on the worker whose master dispatches it).
GraphDef TwoCounters() {
  GraphDef g;
  g.nodes = {Counter("global_step", kPs0),
             Counter("mirror", kPs1),
             Int64Const("zero0", 0, kPs0),
             Int64Const("zero1", 0, kPs1),
             Int64Const("one0", 1, kPs0),
             Int64Const("one1", 1, kPs1),
             Node("init_a", "Assign", {"global_step", "zero0"}, kPs0),
             Node("init_b", "Assign", {"mirror", "zero1"}, kPs1),
             Node("init", "NoOp", {"^init_a", "^init_b"}, ""),
             Node("inc_a", "AssignAdd", {"global_step", "one0"}, kPs0),
             Node("inc_b", "AssignAdd", {"mirror", "one1"}, kPs1),
             Node("train", "NoOp", {"^inc_a", "^inc_b"}, "")};
  return g;
}

int64_t Int64In(const std::filesystem::path& file, const std::string& name) {
  auto t = kernels::ReadTensor(file, name);
  INFO(file << ": " << t.status().ToString());
  REQUIRE(t.ok());
  return t->scalar<int64_t>();
}

// The file `task` wrote in a save's answer.
const CheckpointInfo* Written(const std::vector<TaskCheckpoints>& saved, const std::string& task) {
  for (const TaskCheckpoints& t : saved) {
    if (t.task == task && t.checkpoints.size() == 1) return &t.checkpoints[0];
  }
  return nullptr;
}

TEST_CASE("every checkpoint of two ps tasks holds the same steps on both") {
  TempDir dir;
  LocalCluster cluster({{"ps", 2}, {"worker", 2}}, {"--checkpoint-dir=" + dir.path()});
  REQUIRE(cluster.StartAll().ok());
  const GraphDef graph = TwoCounters();
  auto chief = cluster.Connect("worker", 0);
  REQUIRE(chief.ok());
  REQUIRE((*chief)->CreateSession(graph).ok());
  REQUIRE((*chief)->Run({}, {}, {"init"}, {}).ok());

  // Two workers step while the chief's client saves; each stepper stops at
  // `stop` or after a bounded number of steps.
  std::atomic<bool> stop{false};
  std::atomic<int64_t> stepped{0};
  std::vector<std::string> step_errors(2);
  std::vector<std::thread> steppers;
  for (int w = 0; w < 2; ++w) {
    steppers.emplace_back([&, w] {
      auto io = kj::setupAsyncIo();
      auto c = Client::Connect(io, cluster.Address("worker", w), "", 10s);
      if (!c.ok()) {
        step_errors[w] = c.status().ToString();
        return;
      }
      Status s = (*c)->CreateSession(graph);
      auto step = s.ok() ? (*c)->MakeCallable({}, {}, {"train"}) : StatusOr<int64_t>(s);
      for (int i = 0; step.ok() && i < 200000 && !stop; ++i) {
        auto out = (*c)->RunCallable(*step, {}, {});
        if (!out.ok()) {
          step_errors[w] = out.status().ToString();
          return;
        }
        ++stepped;
      }
      if (!step.ok()) step_errors[w] = step.status().ToString();
    });
  }
  // Each save's files are read as soon as it answers (the task keeps only
  // its newest five).
  constexpr int kSaves = 25;
  int compared = 0;
  std::set<int64_t> steps;
  for (int i = 0; i < kSaves; ++i) {
    // Each save lands among steps of both workers.
    const int64_t before = stepped.load();
    for (int spin = 0; spin < 500 && stepped.load() < before + 20; ++spin) {
      std::this_thread::sleep_for(2ms);
    }
    auto saved = (*chief)->SaveCheckpoint(std::nullopt, 30s);
    INFO("save " << i << ": " << saved.status().ToString());
    REQUIRE(saved.ok());
    const CheckpointInfo* on0 = Written(*saved, kPs0);
    const CheckpointInfo* on1 = Written(*saved, kPs1);
    REQUIRE(on0 != nullptr);
    REQUIRE(on1 != nullptr);
    INFO("step " << on0->step);
    CHECK(on0->step == on1->step);
    const int64_t global = Int64In(on0->path, "global_step");
    const int64_t mirror = Int64In(on1->path, "mirror");
    CHECK(global == on0->step);
    CHECK(mirror == global);
    steps.insert(on0->step);
    ++compared;
  }
  stop = true;
  for (auto& t : steppers) t.join();
  for (const std::string& e : step_errors) CHECK(e.empty());
  INFO("steps run: " << stepped.load());
  CHECK(compared == kSaves);
  // The saves landed among the steps, not all at one step.
  CHECK(steps.size() > kSaves / 2);
}

}  // namespace
}  // namespace tfd::testing
