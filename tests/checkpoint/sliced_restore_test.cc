// Partitioned variables through checkpoints: saved by tasks sharing one
// --checkpoint-dir (DIR/ps-<i>), restored into another shard count on
// another number of tasks, row for row; rows no part holds are an error.
#include "daemon/checkpoint/sliced_restore.h"

#include <catch2/catch.hpp>

#include "daemon/checkpoint/checkpoint_manager.h"
#include "kernels/state/variable.h"
#include "tests/util/io_test_util.h"

namespace tfd {
namespace {

using kernels::Variable;
using testing::TempDir;

constexpr int64_t kRows = 7, kCols = 2;
const TensorShape kFull({kRows, kCols});

// Puts `v` in `rm` under its name, as its VariableV2 would.
void Hold(ResourceMgr& rm, const std::shared_ptr<Variable>& v) {
  auto held = rm.LookupOrCreate<Variable>(
      "", v->name(), [&]() -> StatusOr<std::shared_ptr<Variable>> { return v; });
  REQUIRE(held.ok());
  REQUIRE(*held == v);
}

// One task: its resources and its checkpoint manager on DIR/ps-<task>.
struct Task {
  ResourceMgr resources;
  std::unique_ptr<CheckpointManager> ckpt;

  Task(const std::filesystem::path& dir, int task) {
    CheckpointManager::Options o;
    o.dir = dir / ("ps-" + std::to_string(task));
    o.cluster_dir = dir;  // the tasks share it, as tfd's --checkpoint-dir
    auto m = CheckpointManager::Open(o, resources, nullptr);
    REQUIRE(m.ok());
    ckpt = std::move(m).value();
  }

  // Declares shard `name` holding rows [first, first + rows) of "emb", as
  // VariableV2 does; with `fill`, assigns the rows' values (row r, column c
  // holds 10 * r + c).
  std::shared_ptr<Variable> Shard(const std::string& name, int64_t first, int64_t rows,
                                  bool fill) {
    const SaveSliceInfo slice{"emb", kFull, first, rows};
    auto v = std::make_shared<Variable>("", name, DType::kFloat32,
                                        PartialShape(slice.ShardShape()));
    v->SetSlice(slice);
    Hold(resources, v);
    if (fill) {
      std::vector<float> values;
      for (int64_t r = first; r < first + rows; ++r) {
        for (int64_t c = 0; c < kCols; ++c) values.push_back(static_cast<float>(10 * r + c));
      }
      REQUIRE(v->Assign(Tensor::FromVector(values, slice.ShardShape()), true).ok());
    }
    return v;
  }
};

// Every element of `v`, holding rows from `first`, is 10 * row + column.
void CheckRows(const Variable& v, int64_t first) {
  auto t = v.Read();
  INFO(v.name() << ": " << t.status().ToString());
  REQUIRE(t.ok());
  for (int64_t i = 0; i < t->num_elements(); ++i) {
    INFO("element " << i);
    CHECK(t->data<float>()[i] == static_cast<float>(10 * (first + i / kCols) + i % kCols));
  }
}

// Two shards on two tasks, [0, 4) on ps-0 and [4, 7) on ps-1, saved as
// checkpoint step 10 of both, with a dense variable "w" on ps-1.
void SaveTwoShards(const std::filesystem::path& dir) {
  Task ps0(dir, 0), ps1(dir, 1);
  ps0.Shard("emb/part_0", 0, 4, true);
  ps1.Shard("emb/part_1", 4, 3, true);
  auto w = std::make_shared<Variable>("", "w", DType::kFloat32, PartialShape({1}));
  Hold(ps1.resources, w);
  REQUIRE(w->Assign(Tensor::FromVector<float>({5}), true).ok());
  for (Task* t : {&ps0, &ps1}) {
    REQUIRE(t->ckpt->Write(10).ok());
    REQUIRE(t->ckpt->Commit(10).ok());
  }
}

TEST_CASE("two shards on two tasks restore into three shards on three tasks, row for row") {
  TempDir dir;
  SaveTwoShards(dir.path());
  const int64_t first[] = {0, 3, 5}, rows[] = {3, 2, 2};
  for (int i = 0; i < 3; ++i) {
    Task task(dir.path(), i);  // ps-2 has no part of step 10: it reads the others'
    auto v = task.Shard("emb/part_" + std::to_string(i), first[i], rows[i], false);
    auto restored = task.ckpt->Restore(10);
    INFO("ps-" << i << ": " << restored.status().ToString());
    REQUIRE(restored.ok());
    CheckRows(*v, first[i]);
  }
}

TEST_CASE("two shards restore into one, and a dense variable follows to another task") {
  TempDir dir;
  SaveTwoShards(dir.path());
  Task ps0(dir.path(), 0);
  auto whole = ps0.Shard("emb/part_0", 0, kRows, false);
  // "w" was on ps-1; the job's new placement puts it on ps-0.
  auto w = std::make_shared<Variable>("", "w", DType::kFloat32, PartialShape({1}));
  Hold(ps0.resources, w);
  auto restored = ps0.ckpt->Restore(10);
  INFO(restored.status().ToString());
  REQUIRE(restored.ok());
  CheckRows(*whole, 0);
  auto wv = w->Read();
  REQUIRE(wv.ok());
  CHECK(wv->data<float>()[0] == 5);
}

TEST_CASE("a shard whose rows no saved part holds is an error naming the variable and rows") {
  TempDir dir;
  SaveTwoShards(dir.path());
  std::filesystem::remove(dir.path() / "ps-1" / CheckpointFileName(10));
  Task ps1(dir.path(), 1);
  auto v = ps1.Shard("emb/part_1", 3, 2, false);  // rows 3 (on ps-0's part) and 4 (lost)
  auto restored = ps1.ckpt->Restore(10);
  REQUIRE(restored.status().code() == Code::kNotFound);
  const std::string& m = restored.status().message();
  INFO(m);
  CHECK(m.find("'emb'") != std::string::npos);
  CHECK(m.find("rows [4, 5)") != std::string::npos);
  CHECK(m.find("'emb/part_1'") != std::string::npos);
  CHECK_FALSE(v->initialized());  // nothing assigned
}

TEST_CASE("the same sharding restores on start, and the restored shard keeps its slice") {
  TempDir dir;
  SaveTwoShards(dir.path());
  Task ps1(dir.path(), 1);
  auto restored = ps1.ckpt->Restore(std::nullopt);  // no graph yet: as on start
  INFO(restored.status().ToString());
  REQUIRE(restored.ok());
  auto v = ps1.resources.Lookup<Variable>("", "emb/part_1");
  REQUIRE(v.ok());
  CHECK((*v)->created_by_restore());
  CheckRows(**v, 4);
  REQUIRE((*v)->CheckpointSlice().has_value());
  CHECK(*(*v)->CheckpointSlice() == SaveSliceInfo{"emb", kFull, 4, 3});
  // The slice entry describes; it restores no resource of its own.
  CHECK(ps1.resources.List().size() == 2);  // emb/part_1 and w
}

TEST_CASE("slice texts parse back and refuse what is not one") {
  const SaveSliceInfo s{"layer/emb", TensorShape({100, 16}), 34, 33};
  CHECK(s.ToString() == "layer/emb;100,16;34,33");
  auto back = SaveSliceInfo::Parse(s.ToString());
  REQUIRE(back.ok());
  CHECK(*back == s);
  CHECK(back->ShardShape() == TensorShape({33, 16}));
  for (const char* bad : {"", "emb", "emb;10", ";10;0,1", "emb;;0,1", "emb;10;0", "emb;10;5,6",
                          "emb;10;-1,2", "emb;10;0,x"}) {
    INFO(bad);
    CHECK(SaveSliceInfo::Parse(bad).status().code() == Code::kInvalidArgument);
  }
}

}  // namespace
}  // namespace tfd
