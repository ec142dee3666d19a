// A kind of resource that nothing in daemon/ knows — a counter defined in
// this file alone, created by an op of its own — goes through checkpoints
// and the /metrics page by kernels::Resource only: saved, restored (into the
// counter, or held until its op creates it) and listed, with no daemon change.
#include <catch2/catch.hpp>

#include <atomic>

#include "common/shape_inference.h"
#include "common/tensor_bundle/checkpoint_file.h"
#include "daemon/checkpoint/checkpoint_dir.h"
#include "daemon/checkpoint/checkpoint_manager.h"
#include "daemon/metrics_page.h"
#include "kernels/framework/resource.h"
#include "tests/util/io_test_util.h"
#include "tests/util/kernel_runner.h"

namespace tfd::testing {
namespace {

constexpr std::string_view kCounterNamespace = "@test_counter/";

// Counts; saved as an int64 scalar under "@test_counter/NAME".
class Counter final : public kernels::Resource {
 public:
  std::string_view Kind() const override { return "test counter"; }
  std::string DebugString() const override { return "test counter at " + std::to_string(n_); }
  kernels::ResourceDescription Describe() const override {
    return {.kind = "test_counter",
            .gauges = {{"count", "Each test counter's count.", static_cast<double>(n_.load())}}};
  }
  std::optional<std::string_view> CheckpointNamespace() const override {
    return kCounterNamespace;
  }
  std::optional<Tensor> CheckpointValue() const override {
    return Tensor::Scalar<int64_t>(n_.load());
  }
  Status CheckRestore(const Tensor& saved, const std::string& key,
                      const std::string& file) const override {
    if (saved.dtype() == DType::kInt64 && saved.shape() == TensorShape({})) return OkStatus();
    return errors::InvalidArgument("test counter '", key, "' in '", file,
                                   "' must be an int64 scalar, not ", saved.Describe());
  }
  Status Restore(const Tensor& saved, const std::string&) override {
    n_ = saved.scalar<int64_t>();
    return OkStatus();
  }
  int64_t Add(int64_t delta) { return n_ += delta; }

 private:
  std::atomic<int64_t> n_{0};
};

// TestCounterAdd(shared_name, delta) -> count: adds to the counter, made on
// the first run.
class TestCounterAdd : public OpKernel {
 public:
  explicit TestCounterAdd(OpKernelConstruction& c) : OpKernel(c) {
    c.SetStatus(c.GetAttr("shared_name", &name_));
    c.SetStatus(c.GetAttr("delta", &delta_));
  }
  void Compute(OpKernelContext& ctx) override {
    auto counter = kernels::LookupOrCreateRestored<Counter>(
        ctx.resources(), kCounterNamespace, "", name_,
        [] { return StatusOr<std::shared_ptr<Counter>>(std::make_shared<Counter>()); });
    TFD_OP_REQUIRES_OK(ctx, counter.status());
    ctx.set_output(0, Tensor::Scalar<int64_t>((*counter)->Add(delta_)));
  }

 private:
  std::string name_;
  int64_t delta_ = 0;
};

struct CounterTask {
  OpRegistry registry;
  ResourceMgr resources;
  KernelEnv kernel_env;
  std::unique_ptr<CheckpointManager> checkpoints;

  explicit CounterTask(const std::filesystem::path& checkpoint_dir) {
    REQUIRE(registry
                .Add<TestCounterAdd>(OpDefBuilder("TestCounterAdd")
                                         .Output("count: int64")
                                         .Attr("shared_name: string")
                                         .Attr("delta: int")
                                         .SetIsStateful(),
                                     shape_fns::Scalar)
                .ok());
    kernel_env.resources = &resources;
    CheckpointManager::Options options;
    options.dir = checkpoint_dir;
    auto opened = CheckpointManager::Open(options, resources, nullptr);
    REQUIRE(opened.ok());
    checkpoints = std::move(opened).value();
  }

  // Runs TestCounterAdd on the counter; its count after.
  StatusOr<int64_t> Add(int64_t delta) {
    RunOpOptions options;
    options.env = &kernel_env;
    TFD_ASSIGN_OR_RETURN(auto out, RunOp(registry, "TestCounterAdd",
                                         {{"shared_name", std::string("clicks")},
                                          {"delta", delta}},
                                         {}, options));
    return out[0].scalar<int64_t>();
  }
};

TEST_CASE("a resource the daemon does not know is saved, restored and shown on /metrics") {
  TempDir dir;
  CounterTask task(dir.path());
  REQUIRE(*task.Add(5) == 5);
  auto saved = task.checkpoints->Save(1);
  REQUIRE(saved.ok());

  auto entries = kernels::ReadCheckpoint(saved->checkpoint.path);
  REQUIRE(entries.ok());
  REQUIRE(entries->size() == 1);
  CHECK((*entries)[0].first == "@test_counter/clicks");
  CHECK((*entries)[0].second.scalar<int64_t>() == 5);

  REQUIRE(*task.Add(2) == 7);
  auto restored = task.checkpoints->Restore(1);
  REQUIRE(restored.ok());
  CHECK(restored->variables == std::vector<std::string>{"@test_counter/clicks"});
  CHECK(*task.Add(0) == 5);

  TaskEnv env;
  env.kernel_env = &task.kernel_env;
  const std::string page = RenderMetrics(env, "test");
  CHECK_THAT(page, Catch::Contains("tfd_resources{kind=\"test_counter\"} 1\n"));
  CHECK_THAT(page, Catch::Contains("# HELP tfd_test_counter_count Each test counter's count.\n"
                                   "# TYPE tfd_test_counter_count gauge\n"
                                   "tfd_test_counter_count{test_counter=\"clicks\"} 5\n"));
}

TEST_CASE("a restored resource its op has not made yet takes its value up when made") {
  TempDir dir;
  {
    CounterTask before(dir.path());
    REQUIRE(*before.Add(41) == 41);
    REQUIRE(before.checkpoints->Save(3).ok());
  }
  CounterTask restarted(dir.path());
  REQUIRE(restarted.checkpoints->Restore(std::nullopt).ok());
  // A save before the op runs keeps the value.
  auto saved = restarted.checkpoints->Save(4);
  REQUIRE(saved.ok());
  auto entries = kernels::ReadCheckpoint(saved->checkpoint.path);
  REQUIRE(entries.ok());
  REQUIRE(entries->size() == 1);
  CHECK((*entries)[0].first == "@test_counter/clicks");
  CHECK((*entries)[0].second.scalar<int64_t>() == 41);

  CHECK(*restarted.Add(1) == 42);
  CHECK(restarted.resources.List().size() == 1);  // the value waits no more
}

TEST_CASE("a saved value the resource refuses fails the restore before anything is assigned") {
  TempDir dir;
  CounterTask task(dir.path());
  REQUIRE(*task.Add(5) == 5);
  const auto path = dir.path() / CheckpointFileName(9);
  REQUIRE(kernels::WriteCheckpoint(path, {"@test_counter/clicks"}, {Tensor::Scalar(1.5f)}).ok());
  auto restored = task.checkpoints->Restore(9);
  REQUIRE_FALSE(restored.ok());
  CHECK(restored.status().code() == Code::kInvalidArgument);
  CHECK_THAT(restored.status().message(), Catch::Contains("must be an int64 scalar"));
  CHECK(*task.Add(0) == 5);
}

TEST_CASE("a held value its resource refuses fails the op that makes it, naming the file") {
  TempDir dir;
  CounterTask task(dir.path());
  const auto path = dir.path() / CheckpointFileName(9);
  REQUIRE(kernels::WriteCheckpoint(path, {"@test_counter/clicks"}, {Tensor::Scalar(1.5f)}).ok());
  REQUIRE(task.checkpoints->Restore(9).ok());  // nothing to check it against yet
  for (int run = 0; run < 2; ++run) {  // and the value stays: the next run fails the same way
    auto added = task.Add(1);
    REQUIRE_FALSE(added.ok());
    CHECK(added.status().code() == Code::kInvalidArgument);
    CHECK_THAT(added.status().message(), Catch::Contains("must be an int64 scalar"));
    CHECK_THAT(added.status().message(), Catch::Contains(path.string()));
  }
}

}  // namespace
}  // namespace tfd::testing
