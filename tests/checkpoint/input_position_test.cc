// A dataset's input position in a task's checkpoints: a task restored from a
// checkpoint reads on exactly where the saved model left its input, whether
// the dataset exists yet or not, and refuses a position that means nothing
// for the graph's dataset (another shard, seed or file).
#include <catch2/catch.hpp>

#include "common/tensor_bundle/checkpoint_file.h"
#include "daemon/checkpoint/checkpoint_dir.h"
#include "daemon/checkpoint/checkpoint_manager.h"
#include "kernels/data/input_position.h"
#include "kernels/register_all.h"
#include "kernels/state/variable.h"
#include "tests/kernels/data/data_test_util.h"
#include "tests/util/kernel_runner.h"

namespace tfd::testing {
namespace {

using kernels::data::InputPosition;

// One task with an IDX dataset of `examples` 1x2 images whose label is the
// example's index, and a checkpoint directory (shared between tasks made
// with the same `ckpt`).
struct Task {
  Task(const std::filesystem::path& ckpt, int examples = 10) {
    REQUIRE(kernels::RegisterAll(registry).ok());
    env.resources = &resources;
    env.io_dirs = {dir.path()};
    env.task = "/job:worker/replica:0/task:0";
    std::vector<uint8_t> labels;
    for (int i = 0; i < examples; ++i) labels.push_back(static_cast<uint8_t>(i));
    WriteBytes(dir.path() / "images", IdxImagesBytes(static_cast<uint32_t>(examples), 1, 2));
    WriteBytes(dir.path() / "labels", IdxLabelsBytes(labels));
    CheckpointManager::Options options;
    options.dir = ckpt;
    auto m = CheckpointManager::Open(options, resources, nullptr);
    REQUIRE(m.ok());
    checkpoints = std::move(m).value();
  }

  RunOpOptions Options() {
    RunOpOptions o;
    o.env = &env;
    return o;
  }

  // The dataset "mnist": shuffled with `seed`, 3 epochs.
  StatusOr<Value> Dataset(int64_t seed = 7) {
    AttrMap attrs{{"images_path", std::string("images")},
                  {"labels_path", std::string("labels")},
                  {"shared_name", std::string("mnist")},
                  {"seed", seed},
                  {"epochs", int64_t{3}}};
    TFD_ASSIGN_OR_RETURN(auto out, RunOpValues(registry, "IdxDataset", attrs, {}, Options()));
    return out[0];
  }

  // The labels of the next batch of 3; empty at the end.
  std::vector<int> Next(const Value& handle) {
    auto out = RunOpValues(registry, "IdxNextBatch", {{"batch_size", int64_t{3}}}, {handle},
                           Options());
    if (!out.ok()) {
      CHECK(out.status().code() == Code::kOutOfRange);
      return {};
    }
    const Tensor& labels = (*out)[1].tensor;
    return std::vector<int>(labels.data<int32_t>(), labels.data<int32_t>() + labels.dim(0));
  }

  // Every label still to come, batch after batch.
  std::vector<int> Rest(const Value& handle) {
    std::vector<int> all;
    for (int i = 0; i < 100; ++i) {
      auto b = Next(handle);
      if (b.empty()) return all;
      all.insert(all.end(), b.begin(), b.end());
    }
    FAIL("the dataset never ended");
    return all;
  }

  DataTempDir dir;
  OpRegistry registry;
  ResourceMgr resources;
  KernelEnv env;
  std::unique_ptr<CheckpointManager> checkpoints;
};

TEST_CASE("a restarted task reads on from the checkpoint's input position, not from epoch 0") {
  DataTempDir ckpt;
  Task before(ckpt.path());
  auto ds = before.Dataset();
  REQUIRE(ds.ok());
  for (int i = 0; i < 4; ++i) REQUIRE(before.Next(*ds).size() == 3);  // 12: epoch 1, 2 in
  REQUIRE(before.checkpoints->Save(40).ok());
  const std::vector<int> rest = before.Rest(*ds);
  REQUIRE(rest.size() == 18);

  // A new process: the position waits until the graph's dataset op runs.
  Task after(ckpt.path());
  auto restored = after.checkpoints->Restore(std::nullopt);
  INFO(restored.status().ToString());
  REQUIRE(restored.ok());
  CHECK(restored->variables == std::vector<std::string>{"@input/mnist"});
  CHECK(restored->checkpoint.variables == 1);
  // Saved again before any step: the waiting position is kept, not lost.
  REQUIRE(after.checkpoints->Save(41).ok());
  auto again = after.Dataset();
  REQUIRE(again.ok());
  CHECK(after.Rest(*again) == rest);

  Task third(ckpt.path());
  REQUIRE(third.checkpoints->Restore(41).ok());
  auto ds3 = third.Dataset();
  REQUIRE(ds3.ok());
  CHECK(third.Rest(*ds3) == rest);
}

TEST_CASE("restoring on a live task moves its dataset back to the saved position") {
  DataTempDir ckpt;
  Task t(ckpt.path());
  auto ds = t.Dataset();
  REQUIRE(ds.ok());
  REQUIRE(t.Next(*ds).size() == 3);
  REQUIRE(t.checkpoints->Save(1).ok());
  // An exhausted dataset saved too: its position is the end.
  const std::vector<int> rest = t.Rest(*ds);
  REQUIRE(t.checkpoints->Save(2).ok());
  REQUIRE(t.checkpoints->Restore(1).ok());
  CHECK(t.Rest(*ds) == rest);
  REQUIRE(t.checkpoints->Restore(2).ok());
  CHECK(t.Next(*ds).empty());
  // Twice in a row, and the earlier one again: each restore replaces the last.
  REQUIRE(t.checkpoints->Restore(1).ok());
  REQUIRE(t.checkpoints->Restore(1).ok());
  CHECK(t.Rest(*ds) == rest);
}

TEST_CASE("a checkpoint without a dataset's position starts it over, even one still waiting") {
  DataTempDir ckpt;
  Task before(ckpt.path());
  auto ds = before.Dataset();
  REQUIRE(ds.ok());
  const std::vector<int> all = before.Rest(*ds);  // from epoch 0, then saved exhausted
  REQUIRE(before.checkpoints->Save(7).ok());
  REQUIRE(kernels::WriteCheckpoint(ckpt.path() / CheckpointFileName(8), {"w"},
                                   {Tensor::Scalar<float>(1)})
              .ok());

  Task after(ckpt.path());
  REQUIRE(after.checkpoints->Restore(7).ok());  // a position waits for "mnist"
  REQUIRE(after.checkpoints->Restore(8).ok());  // names no dataset
  auto again = after.Dataset();
  REQUIRE(again.ok());
  CHECK(after.Rest(*again) == all);
  // And a live one, read to the end, goes back to epoch 0 too.
  REQUIRE(after.checkpoints->Restore(8).ok());
  CHECK(after.Rest(*again) == all);
}

TEST_CASE("a position taken under another order is refused with what differs") {
  DataTempDir ckpt;
  {
    Task t(ckpt.path());
    auto ds = t.Dataset();
    REQUIRE(ds.ok());
    REQUIRE(t.Next(*ds).size() == 3);
    REQUIRE(t.checkpoints->Save(5).ok());
  }
  SECTION("another seed: the dataset op fails, and fails again on the next run") {
    Task t(ckpt.path());
    REQUIRE(t.checkpoints->Restore(5).ok());
    for (int attempt = 0; attempt < 2; ++attempt) {
      auto ds = t.Dataset(/*seed=*/8);
      REQUIRE_FALSE(ds.ok());
      INFO(ds.status().ToString());
      CHECK(ds.status().code() == Code::kFailedPrecondition);
      CHECK_THAT(ds.status().message(), Catch::Contains("seed 8") && Catch::Contains("mnist") &&
                                            Catch::Contains("or train a new model"));
    }
  }
  SECTION("files with another number of examples: the load fails naming the count") {
    Task t(ckpt.path(), /*examples=*/7);
    REQUIRE(t.checkpoints->Restore(5).ok());
    auto ds = t.Dataset();
    REQUIRE_FALSE(ds.ok());
    CHECK(ds.status().code() == Code::kFailedPrecondition);
    CHECK_THAT(ds.status().message(), Catch::Contains("now hold 7 examples"));
  }
  SECTION("a live dataset of another seed: the restore fails and assigns nothing") {
    Task t(ckpt.path());
    auto w = t.resources.LookupOrCreate<kernels::Variable>(
        "", "w", [&]() -> StatusOr<std::shared_ptr<kernels::Variable>> {
          return std::make_shared<kernels::Variable>("", "w", DType::kFloat32, PartialShape({}));
        });
    REQUIRE(w.ok());
    REQUIRE((*w)->Assign(Tensor::Scalar<float>(3), true).ok());
    auto ds = t.Dataset(/*seed=*/9);
    REQUIRE(ds.ok());
    const std::vector<int> first = t.Next(*ds);
    REQUIRE(t.checkpoints->Save(6).ok());  // holds w = 3
    REQUIRE((*w)->Assign(Tensor::Scalar<float>(4), true).ok());
    auto restored = t.checkpoints->Restore(5);  // no w, seed 7
    REQUIRE_FALSE(restored.ok());
    CHECK(restored.status().code() == Code::kFailedPrecondition);
    CHECK_THAT(restored.status().message(), Catch::Contains("ckpt-5"));
    CHECK((*w)->Read()->scalar<float>() == 4);
    REQUIRE(t.checkpoints->Restore(6).ok());
    CHECK((*w)->Read()->scalar<float>() == 3);
  }
}

TEST_CASE("hostile positions in a checkpoint are refused before anything is assigned") {
  DataTempDir ckpt;
  Task t(ckpt.path());
  const auto path = ckpt.path() / CheckpointFileName(9);
  SECTION("wrong dtype or shape") {
    REQUIRE(kernels::WriteCheckpoint(path, {"@input/mnist"},
                                     {Tensor::FromVector<int64_t>({1, 2, 3})})
                .ok());
    auto r = t.checkpoints->Restore(9);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == Code::kInvalidArgument);
    CHECK_THAT(r.status().message(), Catch::Contains("@input/mnist") && Catch::Contains("int64[7]"));
  }
  SECTION("a position past the shard's examples, or a shard past the count") {
    const std::vector<int64_t> past = {0, 999999999999, 10, 0, 1, 7, 1};
    REQUIRE(kernels::WriteCheckpoint(path, {"@input/mnist"}, {Tensor::FromVector(past)}).ok());
    REQUIRE(t.checkpoints->Restore(9).ok());  // waits for the dataset, which checks it
    auto ds = t.Dataset();
    REQUIRE_FALSE(ds.ok());
    CHECK(ds.status().code() == Code::kFailedPrecondition);
    CHECK_THAT(ds.status().message(), Catch::Contains("10 examples per epoch"));

    const std::vector<int64_t> shard = {0, 0, 10, 5, 2, 7, 1};
    REQUIRE(kernels::WriteCheckpoint(path, {"@input/mnist"}, {Tensor::FromVector(shard)}).ok());
    auto r = t.checkpoints->Restore(9);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == Code::kInvalidArgument);
    CHECK_THAT(r.status().message(), Catch::Contains("impossible"));
  }
}

TEST_CASE("no variable can take a key an input position uses") {
  auto key = CheckpointKey("", "@input/mnist");
  REQUIRE_FALSE(key.ok());
  CHECK(key.status().code() == Code::kInvalidArgument);
  CHECK(CheckpointKey("", "@inputs").ok());
  CHECK(kernels::data::DatasetKeyOfPosition("@input/c:mnist") == "c:mnist");
  CHECK_FALSE(kernels::data::DatasetKeyOfPosition("mnist"));
}

}  // namespace
}  // namespace tfd::testing
