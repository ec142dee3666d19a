// A restore counts against the task's memory budget (--memory-budget) like
// any variable's value: what fits is charged for as long as the variables
// hold it; what does not fit is refused by name and assigns nothing.
#include <catch2/catch.hpp>

#include "daemon/checkpoint/checkpoint_manager.h"
#include "kernels/state/variable.h"
#include "tests/util/io_test_util.h"

namespace tfd {
namespace {

using kernels::Variable;
using testing::TempDir;

constexpr int64_t kEmbRows = 4096;  // 16 KiB of float32

void SetVar(ResourceMgr& rm, const std::string& name, const Tensor& value) {
  auto v = rm.LookupOrCreate<Variable>("", name, [&]() -> StatusOr<std::shared_ptr<Variable>> {
    return std::make_shared<Variable>("", name, value.dtype(), PartialShape(value.shape()));
  });
  REQUIRE(v.ok());
  REQUIRE((*v)->Assign(value, true).ok());
}

Tensor Filled(int64_t n, float value) {
  return Tensor::FromVector<float>(std::vector<float>(static_cast<size_t>(n), value));
}

float First(ResourceMgr& rm, const std::string& name) {
  auto v = rm.Lookup<Variable>("", name);
  REQUIRE(v.ok());
  auto t = (*v)->Read();
  REQUIRE(t.ok());
  return t->data<float>()[0];
}

std::unique_ptr<CheckpointManager> Open(const std::filesystem::path& dir, ResourceMgr& rm,
                                        std::shared_ptr<MemoryBudget> memory) {
  CheckpointManager::Options options;
  options.dir = dir;
  options.memory = std::move(memory);
  auto m = CheckpointManager::Open(options, rm, nullptr);
  INFO(m.status().ToString());
  REQUIRE(m.ok());
  return std::move(m).value();
}

// Saves step 1 with "emb" of 4 rows and step 2 with "emb" of kEmbRows,
// "bias" a scalar in both.
void SaveTwoSteps(const std::filesystem::path& dir) {
  ResourceMgr small, large;
  SetVar(small, "emb", Filled(4, 1.0f));
  SetVar(small, "bias", Tensor::Scalar(1.0f));
  REQUIRE(Open(dir, small, nullptr)->Save(1).ok());
  SetVar(large, "emb", Filled(kEmbRows, 2.0f));
  SetVar(large, "bias", Tensor::Scalar(2.0f));
  REQUIRE(Open(dir, large, nullptr)->Save(2).ok());
}

TEST_CASE("restored variables are charged to the memory budget while they hold the values") {
  TempDir tmp;
  SaveTwoSteps(tmp.path());
  auto budget = std::make_shared<MemoryBudget>(1 << 20);
  {
    ResourceMgr task;
    auto m = Open(tmp.path(), task, budget);
    auto restored = m->Restore(2);
    INFO(restored.status().ToString());
    REQUIRE(restored.ok());
    CHECK(First(task, "emb") == 2.0f);
    CHECK(budget->used() >= kEmbRows * sizeof(float));
  }
  // The task's variables are gone, and with them their charge.
  CHECK(budget->used() == 0);
}

TEST_CASE("a restore that does not fit the budget names the variable and assigns nothing") {
  TempDir tmp;
  SaveTwoSteps(tmp.path());
  // Room for step 1, not for step 2's 16 KiB "emb". (The values the tests
  // assign themselves are not charged: they are made outside any kernel.)
  auto budget = std::make_shared<MemoryBudget>(8 << 10);

  SECTION("the variables keep their values") {
    ResourceMgr task;
    SetVar(task, "emb", Filled(kEmbRows, 7.0f));
    SetVar(task, "bias", Tensor::Scalar(7.0f));
    auto m = Open(tmp.path(), task, budget);
    auto r = m->Restore(2);
    CHECK(r.status().code() == Code::kResourceExhausted);
    CHECK_THAT(r.status().message(), Catch::Contains("'emb'"));
    CHECK_THAT(r.status().message(), Catch::Contains("--memory-budget"));
    CHECK(First(task, "emb") == 7.0f);
    CHECK(First(task, "bias") == 7.0f);
    CHECK(budget->used() == 0);
  }
  SECTION("the latest step is refused rather than an older one restored in its place") {
    ResourceMgr task;
    auto m = Open(tmp.path(), task, budget);
    Status r = m->Restore(std::nullopt).status();
    CHECK(r.code() == Code::kResourceExhausted);
    CHECK_THAT(r.message(), Catch::Contains("'emb'"));
    CHECK(task.List().empty());
    CHECK(budget->used() == 0);
    auto older = m->Restore(1);
    INFO(older.status().ToString());
    REQUIRE(older.ok());
    CHECK(First(task, "bias") == 1.0f);
    CHECK(budget->used() > 0);
  }
}

}  // namespace
}  // namespace tfd
