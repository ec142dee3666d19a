// CheckpointManager and the checkpoint directory layout on a scratch
// directory: names, save, list, prune, restore (given and latest), damage,
// and the phases of a cluster save (write pending, commit, prune, discard).
#include "daemon/checkpoint/checkpoint_manager.h"

#include <signal.h>
#include <sys/resource.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <fstream>
#include <set>
#include <thread>

#include "daemon/checkpoint/checkpoint_dir.h"
#include "kernels/state/variable.h"
#include "tests/util/io_test_util.h"

namespace tfd {
namespace {

using kernels::Variable;
using testing::TempDir;

std::shared_ptr<Variable> SetVar(ResourceMgr& rm, const std::string& container,
                                 const std::string& name, const Tensor& value) {
  auto v = rm.LookupOrCreate<Variable>(container, name, [&]() -> StatusOr<std::shared_ptr<Variable>> {
    return std::make_shared<Variable>(container, name, value.dtype(), PartialShape(value.shape()));
  });
  REQUIRE(v.ok());
  REQUIRE((*v)->Assign(value, true).ok());
  return *v;
}

float Read(ResourceMgr& rm, const std::string& name, int i = 0) {
  auto v = rm.Lookup<Variable>("", name);
  REQUIRE(v.ok());
  auto t = (*v)->Read();
  REQUIRE(t.ok());
  return t->data<float>()[i];
}

std::unique_ptr<CheckpointManager> Open(const std::filesystem::path& dir, ResourceMgr& rm,
                                        int keep = 5) {
  CheckpointManager::Options options;
  options.dir = dir;
  options.keep = keep;
  auto m = CheckpointManager::Open(options, rm, nullptr);
  INFO(m.status().ToString());
  REQUIRE(m.ok());
  return std::move(m).value();
}

// The names of the files in `dir`.
std::set<std::string> Names(const std::filesystem::path& dir) {
  std::set<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.insert(e.path().filename().string());
  }
  return names;
}

void FlipByte(const std::filesystem::path& p, size_t offset) {
  std::string bytes = testing::ReadFile(p);
  REQUIRE(bytes.size() > offset);
  bytes[offset] ^= 0x5a;
  testing::WriteFile(p, bytes);
}

TEST_CASE("checkpoint file names have one spelling per step") {
  CHECK(CheckpointFileName(0) == "ckpt-0.tfdckpt");
  CHECK(CheckpointFileName(120) == "ckpt-120.tfdckpt");
  CHECK(ParseCheckpointFileName("ckpt-120.tfdckpt") == 120);
  CHECK(ParseCheckpointFileName("ckpt-0.tfdckpt") == 0);
  CHECK_FALSE(ParseCheckpointFileName("ckpt-007.tfdckpt"));
  CHECK_FALSE(ParseCheckpointFileName("ckpt--1.tfdckpt"));
  CHECK_FALSE(ParseCheckpointFileName("ckpt-.tfdckpt"));
  CHECK_FALSE(ParseCheckpointFileName("ckpt-12.tfdckpt.tmp-abc"));
  CHECK_FALSE(ParseCheckpointFileName("model-12.tfdckpt"));
  CHECK(PendingCheckpointFileName(120) == "ckpt-120.tfdckpt.pending");
  CHECK(ParsePendingCheckpointFileName("ckpt-120.tfdckpt.pending") == 120);
  CHECK_FALSE(ParsePendingCheckpointFileName("ckpt-120.tfdckpt"));
  CHECK_FALSE(ParseCheckpointFileName("ckpt-120.tfdckpt.pending"));
}

TEST_CASE("variable keys round-trip and refuse ambiguity") {
  CHECK(*CheckpointKey("", "layer1/w") == "layer1/w");
  CHECK(*CheckpointKey("c", "w:x") == "c:w:x");
  CHECK(SplitCheckpointKey("c:w:x") == std::make_pair(std::string("c"), std::string("w:x")));
  CHECK(SplitCheckpointKey("layer1/w") == std::make_pair(std::string(""), std::string("layer1/w")));
  CHECK(CheckpointKey("", "a:b").status().code() == Code::kInvalidArgument);
  CHECK(CheckpointKey("a:b", "w").status().code() == Code::kInvalidArgument);
}

TEST_CASE("save writes every initialized variable; restore brings the values back") {
  TempDir tmp;
  const auto dir = tmp.path() / "ckpt";  // created by Open
  ResourceMgr rm;
  SetVar(rm, "", "w", Tensor::FromVector<float>({1, 2}));
  SetVar(rm, "", "global_step", Tensor::Scalar<int64_t>(7));
  SetVar(rm, "other", "s", Tensor::Scalar(std::string("text")));
  REQUIRE(rm.LookupOrCreate<Variable>("", "uninit", [] () -> StatusOr<std::shared_ptr<Variable>> {
             return std::make_shared<Variable>("", "uninit", DType::kFloat32, PartialShape::Unknown());
           }).ok());
  auto m = Open(dir, rm);

  auto saved = m->Save(7);
  INFO(saved.status().ToString());
  REQUIRE(saved.ok());
  CHECK(saved->checkpoint.step == 7);
  CHECK(saved->checkpoint.path == (dir / "ckpt-7.tfdckpt").string());
  CHECK(saved->checkpoint.variables == 3);  // the uninitialized one is not saved
  CHECK(saved->checkpoint.bytes > 0);

  SetVar(rm, "", "w", Tensor::FromVector<float>({5, 6}));
  auto restored = m->Restore(7);
  INFO(restored.status().ToString());
  REQUIRE(restored.ok());
  CHECK(restored->variables.size() == 3);
  CHECK(Read(rm, "w", 0) == 1.0f);
  CHECK(Read(rm, "w", 1) == 2.0f);
  CHECK(m->Save(-1).status().code() == Code::kInvalidArgument);

  // A fresh task (a restarted ps): restore creates the variables, and a
  // VariableV2 declaring a compatible shape adopts them.
  ResourceMgr fresh;
  auto m2 = Open(dir, fresh);
  auto latest = m2->Restore(std::nullopt);
  REQUIRE(latest.ok());
  CHECK(latest->checkpoint.step == 7);
  CHECK(Read(fresh, "w", 1) == 2.0f);
  auto w = fresh.Lookup<Variable>("", "w");
  REQUIRE(w.ok());
  CHECK((*w)->created_by_restore());
  CHECK((*w)->AcceptsDeclaration(DType::kFloat32, PartialShape({2})));
  CHECK((*w)->AcceptsDeclaration(DType::kFloat32, PartialShape({-1})));
  CHECK_FALSE((*w)->AcceptsDeclaration(DType::kFloat32, PartialShape({3})));
  CHECK_FALSE((*w)->AcceptsDeclaration(DType::kInt32, PartialShape({2})));
  auto s = fresh.Lookup<Variable>("other", "s");
  REQUIRE(s.ok());
  CHECK((*s)->Read()->data<std::string>()[0] == "text");
  // A variable created by a graph is not so lenient.
  Variable graph_made("", "g", DType::kFloat32, PartialShape({2}));
  CHECK_FALSE(graph_made.AcceptsDeclaration(DType::kFloat32, PartialShape({-1})));
}

TEST_CASE("restore leaves variables the checkpoint lacks alone, and refuses a misfit") {
  TempDir tmp;
  ResourceMgr rm;
  SetVar(rm, "", "w", Tensor::FromVector<float>({1, 2}));
  auto m = Open(tmp.path(), rm);
  REQUIRE(m->Save(1).ok());
  SetVar(rm, "", "later", Tensor::Scalar(3.0f));
  SetVar(rm, "", "w", Tensor::FromVector<float>({8, 9}));
  REQUIRE(m->Restore(1).ok());
  CHECK(Read(rm, "later") == 3.0f);
  CHECK(Read(rm, "w") == 1.0f);

  // Another task declares `w` as a different shape: nothing is assigned.
  ResourceMgr other;
  SetVar(other, "", "w", Tensor::FromVector<float>({1, 2, 3}));
  auto m2 = Open(tmp.path(), other);
  auto r = m2->Restore(1);
  CHECK(r.status().code() == Code::kFailedPrecondition);
  CHECK(r.status().message().find("'w'") != std::string::npos);
  CHECK(Read(other, "w", 2) == 3.0f);
}

TEST_CASE("after a save only the newest K checkpoints are kept") {
  TempDir tmp;
  ResourceMgr rm;
  SetVar(rm, "", "w", Tensor::Scalar(1.0f));
  auto m = Open(tmp.path(), rm, /*keep=*/2);
  std::ofstream(tmp.path() / "notes.txt") << "not ours";
  for (int64_t step : {10, 20, 30}) REQUIRE(m->Save(step).ok());
  auto list = m->List(/*verify=*/true);
  REQUIRE(list.ok());
  REQUIRE(list->size() == 2);
  CHECK((*list)[0].step == 20);  // oldest first
  CHECK((*list)[1].step == 30);
  CHECK((*list)[1].verified);
  CHECK((*list)[1].variables == 1);
  CHECK(std::filesystem::exists(tmp.path() / "notes.txt"));

  // Newest means most recently written: after going back to step 5, its
  // checkpoint is kept and the oldest write goes. (File times tick
  // coarsely; within one tick the higher step counts as newer.)
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(m->Save(5).ok());
  list = m->List(false);
  REQUIRE(list.ok());
  REQUIRE(list->size() == 2);
  CHECK((*list)[0].step == 30);
  CHECK((*list)[1].step == 5);
}

TEST_CASE("a damaged checkpoint is refused by name; latest falls back to the previous good one") {
  TempDir tmp;
  ResourceMgr rm;
  SetVar(rm, "", "w", Tensor::FromVector<float>({1, 2}));
  auto m = Open(tmp.path(), rm);
  REQUIRE(m->Save(1).ok());
  SetVar(rm, "", "w", Tensor::FromVector<float>({3, 4}));
  REQUIRE(m->Save(2).ok());
  const auto bad = tmp.path() / "ckpt-2.tfdckpt";
  FlipByte(bad, 64);  // the first payload starts at 64

  SetVar(rm, "", "w", Tensor::FromVector<float>({9, 9}));
  auto explicit_restore = m->Restore(2);
  CHECK(explicit_restore.status().code() == Code::kDataLoss);
  CHECK(explicit_restore.status().message().find(bad.string()) != std::string::npos);
  CHECK(explicit_restore.status().message().find("checksum mismatch") != std::string::npos);
  CHECK(Read(rm, "w") == 9.0f);  // nothing assigned

  auto latest = m->Restore(std::nullopt);
  INFO(latest.status().ToString());
  REQUIRE(latest.ok());
  CHECK(latest->checkpoint.step == 1);
  REQUIRE(latest->skipped.size() == 1);
  CHECK(latest->skipped[0].find(bad.string()) != std::string::npos);
  CHECK(Read(rm, "w") == 1.0f);

  auto list = m->List(true);
  REQUIRE(list.ok());
  REQUIRE(list->size() == 2);
  CHECK((*list)[0].verified);
  CHECK_FALSE((*list)[1].verified);
  CHECK((*list)[1].problem.find("checksum mismatch") != std::string::npos);

  FlipByte(tmp.path() / "ckpt-1.tfdckpt", 64);
  auto none = m->Restore(std::nullopt);
  CHECK(none.status().code() == Code::kDataLoss);
  CHECK(none.status().message().find("verifies") != std::string::npos);
  CHECK(m->Restore(3).status().code() == Code::kNotFound);
}

TEST_CASE("an empty directory has nothing to restore; stale temporaries are removed on open") {
  TempDir tmp;
  ResourceMgr rm;
  testing::WriteFile(tmp.path() / ".ckpt-4.tfdckpt.tmp-AbC123", "half");
  testing::WriteFile(tmp.path() / ".other.tmp-AbC123", "not ours");
  auto m = Open(tmp.path(), rm);
  CHECK_FALSE(std::filesystem::exists(tmp.path() / ".ckpt-4.tfdckpt.tmp-AbC123"));
  CHECK(std::filesystem::exists(tmp.path() / ".other.tmp-AbC123"));
  CHECK(m->Restore(std::nullopt).status().code() == Code::kNotFound);
  CHECK(m->List(true)->empty());

  // What saves that did not finish left: a pending part and a writer's
  // temporary for one.
  testing::WriteFile(tmp.path() / "ckpt-5.tfdckpt.pending", "all of it, never committed");
  testing::WriteFile(tmp.path() / ".ckpt-6.tfdckpt.pending.tmp-XyZ789", "half");
  Open(tmp.path(), rm);
  CHECK(Names(tmp.path()) == std::set<std::string>{".other.tmp-AbC123"});

  CheckpointManager::Options bad;
  bad.dir = tmp.path();
  bad.keep = 0;
  CHECK(CheckpointManager::Open(bad, rm, nullptr).status().code() == Code::kInvalidArgument);
}

TEST_CASE("a pending part is no checkpoint until it is committed") {
  TempDir tmp;
  ResourceMgr rm;
  SetVar(rm, "", "w", Tensor::FromVector<float>({1, 2}));
  auto m = Open(tmp.path(), rm);
  auto written = m->Write(3);
  INFO(written.status().ToString());
  REQUIRE(written.ok());
  CHECK(written->path == (tmp.path() / "ckpt-3.tfdckpt.pending").string());
  CHECK(written->variables == 1);
  CHECK(std::filesystem::exists(written->path));
  // Neither listed nor restored: a restore must not take a part of a step
  // that other tasks may have failed to write.
  CHECK(m->List(true)->empty());
  CHECK(m->Restore(std::nullopt).status().code() == Code::kNotFound);
  CHECK(m->Restore(3).status().code() == Code::kNotFound);

  SetVar(rm, "", "w", Tensor::FromVector<float>({7, 7}));
  auto committed = m->Commit(3);
  INFO(committed.status().ToString());
  REQUIRE(committed.ok());
  CHECK(committed->path == (tmp.path() / "ckpt-3.tfdckpt").string());
  CHECK(committed->verified);
  CHECK(committed->variables == 1);
  CHECK(Names(tmp.path()) == std::set<std::string>{"ckpt-3.tfdckpt"});
  REQUIRE(m->Restore(std::nullopt).ok());
  CHECK(Read(rm, "w", 1) == 2.0f);  // the value written, not the one at the commit

  CHECK(m->Commit(4).status().code() == Code::kNotFound);
  REQUIRE(m->Write(4).ok());
  REQUIRE(m->Discard(4).ok());
  CHECK(m->Discard(4).ok());  // nothing left to discard is no error
  CHECK(Names(tmp.path()) == std::set<std::string>{"ckpt-3.tfdckpt"});

  // A commit taken back (another task could not commit its part): pending
  // again, then discarded.
  REQUIRE(m->Write(5).ok());
  REQUIRE(m->Commit(5).ok());
  REQUIRE(m->Revert(5).ok());
  CHECK(m->Revert(5).ok());  // nothing left to take back is no error
  CHECK(Names(tmp.path()) ==
        std::set<std::string>{"ckpt-3.tfdckpt", "ckpt-5.tfdckpt.pending"});
  REQUIRE(m->Restore(std::nullopt).ok());
  CHECK(Read(rm, "w", 1) == 2.0f);  // step 3's
  REQUIRE(m->Discard(5).ok());
  CHECK(Names(tmp.path()) == std::set<std::string>{"ckpt-3.tfdckpt"});
}

TEST_CASE("retention keeps the step complete everywhere, every newer file, and keep - 1 older") {
  TempDir tmp;
  ResourceMgr rm;
  SetVar(rm, "", "w", Tensor::Scalar(1.0f));
  auto m = Open(tmp.path(), rm, /*keep=*/1);
  REQUIRE(m->Save(1).ok());
  // Step 2 written here, but another task failed its part: discarded, and
  // nothing older goes.
  REQUIRE(m->Write(2).ok());
  REQUIRE(m->Discard(2).ok());
  // Step 3 committed here, but not on some other task: no prune comes.
  REQUIRE(m->Write(3).ok());
  REQUIRE(m->Commit(3).ok());
  CHECK(Names(tmp.path()) == std::set<std::string>{"ckpt-1.tfdckpt", "ckpt-3.tfdckpt"});
  // A pending part that was never finished (its master went away).
  REQUIRE(m->Write(4).ok());
  // Step 5 complete everywhere: it is kept, older checkpoints and the older
  // pending part go (keep 1).
  REQUIRE(m->Write(5).ok());
  REQUIRE(m->Commit(5).ok());
  // Step 6 committed after it (another save, not yet complete everywhere).
  REQUIRE(m->Write(6).ok());
  REQUIRE(m->Commit(6).ok());
  auto pruned = m->Prune(5);
  INFO(pruned.status().ToString());
  REQUIRE(pruned.ok());
  CHECK(pruned->size() == 3);
  CHECK(Names(tmp.path()) == std::set<std::string>{"ckpt-5.tfdckpt", "ckpt-6.tfdckpt"});
  // A step this task does not hold: nothing is deleted.
  CHECK(m->Prune(9).status().code() == Code::kNotFound);
  CHECK(Names(tmp.path()) == std::set<std::string>{"ckpt-5.tfdckpt", "ckpt-6.tfdckpt"});
}

// As on a full disk: a file-size limit cuts the write short (EFBIG, like
// ENOSPC, is UNAVAILABLE).
TEST_CASE("a part the file system refuses fails naming the file and why, and leaves nothing") {
  TempDir tmp;
  ResourceMgr rm;
  SetVar(rm, "", "w", Tensor::Scalar(1.0f));
  auto m = Open(tmp.path(), rm, /*keep=*/1);
  REQUIRE(m->Save(1).ok());
  SetVar(rm, "", "big", Tensor::FromVector<float>(std::vector<float>(1 << 18, 0.5f)));
  rlimit saved;
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &saved) == 0);
  auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
  rlimit small = saved;
  small.rlim_cur = 64 * 1024;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  auto written = m->Write(2);
  ::setrlimit(RLIMIT_FSIZE, &saved);
  ::signal(SIGXFSZ, old_handler);
  INFO(written.status().ToString());
  REQUIRE_FALSE(written.ok());
  CHECK(written.status().code() == Code::kUnavailable);
  CHECK(testing::Contains(written.status().message(), std::strerror(EFBIG)));
  CHECK(testing::Contains(written.status().message(),
                          (tmp.path() / "ckpt-2.tfdckpt.pending").string()));
  CHECK(Names(tmp.path()) == std::set<std::string>{"ckpt-1.tfdckpt"});
}

}  // namespace
}  // namespace tfd
