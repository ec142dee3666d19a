// Checkpoints on real tfd processes: save, kill -9 of the ps, restart,
// values back; a damaged newest checkpoint refused by name while the
// previous one stays usable; tfctl checkpoint end to end.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/tensor_bundle/checkpoint_file.h"
#include "tests/integration/child_process.h"
#include "tests/integration/cluster_fixture.h"
#include "tests/integration/graph_helpers.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;
using testing::ConstOf;
using testing::LocalCluster;
using testing::Node;
using testing::OneLine;

const std::string kPs = "/job:ps/replica:0/task:0";

// Whether a writer's temporary file (".NAME.tmp-XXXXXX") appears in `dir`
// while `saver` runs, within `bound`: the save is under way there.
bool WaitWriting(const std::string& dir, const testing::ChildProcess& saver,
                 std::chrono::milliseconds bound) {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  while (saver.running() && std::chrono::steady_clock::now() < deadline) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
      const std::string name = e.path().filename().string();
      if (name.starts_with(".") && name.find(".tmp-") != std::string::npos) return true;
    }
    std::this_thread::sleep_for(1ms);
  }
  return false;
}

// A scratch checkpoint directory, removed afterwards.
class ScratchDir {
 public:
  ScratchDir() {
    char tmpl[] = "/tmp/tfd-ckpt-test-XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  // The ps's file: each task keeps its checkpoints in DIR/<job>-<task>.
  std::string File(int64_t step) const {
    return path_ + "/ps-0/ckpt-" + std::to_string(step) + ".tfdckpt";
  }

 private:
  std::string path_;
};

NodeDef VarOf(std::string name, DType dtype, PartialShape shape) {
  return Node(std::move(name), "VariableV2", {}, "/job:ps", {{"dtype", dtype}, {"shape", shape}});
}

// w (float32[2]) and global_step (int64) on the ps, and ops that set them.
GraphDef SetterGraph() {
  GraphDef g;
  g.nodes = {VarOf("w", DType::kFloat32, PartialShape({2})),
             VarOf("global_step", DType::kInt64, PartialShape(std::vector<int64_t>{})),
             ConstOf("w1", Tensor::FromVector<float>({1, 2}), "/job:ps"),
             ConstOf("w2", Tensor::FromVector<float>({5, 6}), "/job:ps"),
             ConstOf("s7", Tensor::Scalar<int64_t>(7), "/job:ps"),
             ConstOf("s9", Tensor::Scalar<int64_t>(9), "/job:ps"),
             Node("set1", "Assign", {"w", "w1"}, ""),
             Node("set2", "Assign", {"w", "w2"}, ""),
             Node("step7", "Assign", {"global_step", "s7"}, ""),
             Node("step9", "Assign", {"global_step", "s9"}, "")};
  return g;
}

Status RunTargets(Client& c, std::vector<std::string> targets) {
  return c.Run({}, {}, targets, {}).status();
}

std::vector<float> ReadW(Client& c) {
  auto v = c.ReadVariable("w", 5s);
  INFO(v.status().ToString());
  REQUIRE(v.ok());
  REQUIRE(v->first.initialized);
  const Tensor& t = v->second;
  return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
}

const TaskCheckpoints* Find(const std::vector<TaskCheckpoints>& tasks, const std::string& task) {
  for (const auto& t : tasks) {
    if (t.task == task) return &t;
  }
  return nullptr;
}

void FlipByte(const std::string& path, size_t offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  REQUIRE(f.good());
  f.seekg(static_cast<std::streamoff>(offset));
  char c = 0;
  f.get(c);
  f.seekp(static_cast<std::streamoff>(offset));
  f.put(static_cast<char>(c ^ 0x5a));
}

TEST_CASE("a ps killed with -9 and restarted comes back with its saved variables") {
  ScratchDir dir;
  LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.Start("ps", 0, {"--checkpoint-dir", dir.path()}).ok());
  REQUIRE(cluster.Start("worker", 0).ok());
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  Client& c = **client;
  REQUIRE(c.CreateSession(SetterGraph()).ok());
  REQUIRE(RunTargets(c, {"set1", "step7"}).ok());

  // No step given: named after global_step.
  auto saved = c.SaveCheckpoint(std::nullopt, 20s);
  INFO(saved.status().ToString());
  REQUIRE(saved.ok());
  const TaskCheckpoints* ps = Find(*saved, kPs);
  REQUIRE(ps != nullptr);
  REQUIRE(ps->checkpoints.size() == 1);
  CHECK(ps->checkpoints[0].step == 7);
  CHECK(ps->checkpoints[0].path == dir.File(7));
  CHECK(ps->checkpoints[0].variables == 2);
  const TaskCheckpoints* worker = Find(*saved, "/job:worker/replica:0/task:0");
  REQUIRE(worker != nullptr);
  CHECK(worker->directory.empty());  // skipped: it has no checkpoint dir
  CHECK(std::filesystem::exists(dir.File(7)));

  REQUIRE(RunTargets(c, {"set2", "step9"}).ok());
  {
    auto before = cluster.Connect("ps", 0);
    REQUIRE(before.ok());
    CHECK(ReadW(**before) == std::vector<float>{5, 6});
  }

  cluster.Kill("ps", 0);
  REQUIRE(cluster.Start("ps", 0, {"--checkpoint-dir", dir.path()}).ok());
  const std::string log = cluster.Log("ps", 0);
  INFO(OneLine(log));
  CHECK(log.find("restored on start: step 7 from " + dir.File(7)) != std::string::npos);

  auto ps_client = cluster.Connect("ps", 0);
  REQUIRE(ps_client.ok());
  CHECK(ReadW(**ps_client) == std::vector<float>{1, 2});
  auto step = (*ps_client)->ReadVariable("global_step", 5s);
  REQUIRE(step.ok());
  CHECK(step->second.scalar<int64_t>() == 7);
  // It says its variables went back alone, to every caller of the cluster
  // barrier, until a restore of the cluster puts the others back with it.
  auto alone = (*ps_client)->GetStatus(5s);
  REQUIRE(alone.ok());
  CHECK(alone->restored_alone);
  {
    auto other = cluster.Connect("worker", 0);
    REQUIRE(other.ok());
    auto tasks = (*other)->WaitCluster(10s);
    REQUIRE(tasks.ok());
    REQUIRE(tasks->size() == 2);
    CHECK((*tasks)[0].restored_alone);
    CHECK(!(*tasks)[1].restored_alone);
    REQUIRE((*other)->RestoreCheckpoint(Client::kLatestCheckpoint, 20s).ok());
  }
  auto together = (*ps_client)->GetStatus(5s);
  REQUIRE(together.ok());
  CHECK(!together->restored_alone);

  // A new graph uses them without initializing them; it declares w's shape
  // only partly, and still finds the restored variable.
  auto fresh = cluster.Connect("worker", 0);
  REQUIRE(fresh.ok());
  GraphDef use;
  use.nodes = {VarOf("w", DType::kFloat32, PartialShape({-1})),
               ConstOf("two", Tensor::FromVector<float>({2, 2}), "/job:worker"),
               Node("y", "Mul", {"w", "two"}, "/job:worker")};
  REQUIRE((*fresh)->CreateSession(use).ok());
  auto out = (*fresh)->Run({}, {"y"}, {}, {});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK(out->fetches[0].data<float>()[0] == 2.0f);
  CHECK(out->fetches[0].data<float>()[1] == 4.0f);
}

TEST_CASE("a ps whose checkpoint does not fit its --memory-budget starts without it, saying why") {
  ScratchDir dir;
  std::filesystem::create_directories(std::filesystem::path(dir.File(3)).parent_path());
  const Tensor big = Tensor::FromVector<float>(std::vector<float>(size_t{1} << 20, 0.5f));  // 4 MiB
  REQUIRE(kernels::WriteCheckpoint(dir.File(3), {"big"}, {big}).ok());
  LocalCluster cluster({{"ps", 1}});
  REQUIRE(cluster.Start("ps", 0, {"--checkpoint-dir", dir.path(), "--memory-budget", "2M"}).ok());
  {
    const std::string log = cluster.Log("ps", 0);
    INFO(OneLine(log));
    CHECK(log.find("nothing restored on start") != std::string::npos);
    CHECK(log.find("RESOURCE_EXHAUSTED") != std::string::npos);
    CHECK(log.find("'big'") != std::string::npos);
    CHECK(log.find("--memory-budget") != std::string::npos);
    // It serves, without the variable.
    auto ps = cluster.Connect("ps", 0);
    REQUIRE(ps.ok());
    CHECK_FALSE((*ps)->ReadVariable("big", 5s).ok());
  }
  cluster.Kill("ps", 0);
  REQUIRE(cluster.Start("ps", 0, {"--checkpoint-dir", dir.path(), "--memory-budget", "64M"}).ok());
  auto ps = cluster.Connect("ps", 0);
  REQUIRE(ps.ok());
  auto read = (*ps)->ReadVariable("big", 5s);
  INFO(read.status().ToString());
  REQUIRE(read.ok());
  CHECK(read->second.num_elements() == big.num_elements());
}

TEST_CASE("a damaged newest checkpoint is refused by name; the previous good one is used") {
  ScratchDir dir;
  LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.Start("ps", 0, {"--checkpoint-dir", dir.path()}).ok());
  REQUIRE(cluster.Start("worker", 0).ok());
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  Client& c = **client;
  REQUIRE(c.CreateSession(SetterGraph()).ok());
  REQUIRE(RunTargets(c, {"set1", "step7"}).ok());
  REQUIRE(c.SaveCheckpoint(1, 20s).ok());
  REQUIRE(RunTargets(c, {"set2"}).ok());
  REQUIRE(c.SaveCheckpoint(2, 20s).ok());
  // The first tensor's payload starts at byte 64 of the file.
  FlipByte(dir.File(2), 64);
  auto ps_reader = cluster.Connect("ps", 0);
  REQUIRE(ps_reader.ok());

  auto refused = c.RestoreCheckpoint(2, 20s);
  INFO(refused.status().ToString());
  CHECK(refused.status().code() == Code::kDataLoss);
  CHECK(refused.status().message().find(dir.File(2)) != std::string::npos);
  CHECK(refused.status().message().find("checksum mismatch") != std::string::npos);
  CHECK(ReadW(**ps_reader) == std::vector<float>{5, 6});  // nothing assigned

  auto list = c.ListCheckpoints(20s);
  REQUIRE(list.ok());
  const TaskCheckpoints* ps = Find(*list, kPs);
  REQUIRE(ps != nullptr);
  REQUIRE(ps->checkpoints.size() == 2);
  CHECK(ps->checkpoints[0].verified);
  CHECK_FALSE(ps->checkpoints[1].verified);
  CHECK(ps->checkpoints[1].problem.find("checksum mismatch") != std::string::npos);

  auto latest = c.RestoreCheckpoint(Client::kLatestCheckpoint, 20s);
  INFO(latest.status().ToString());
  REQUIRE(latest.ok());
  ps = Find(*latest, kPs);
  REQUIRE(ps != nullptr);
  REQUIRE(ps->checkpoints.size() == 1);
  CHECK(ps->checkpoints[0].step == 1);
  REQUIRE(ps->skipped.size() == 1);
  CHECK(ps->skipped[0].find(dir.File(2)) != std::string::npos);
  CHECK(ReadW(**ps_reader) == std::vector<float>{1, 2});

  // And on restart.
  REQUIRE(RunTargets(c, {"set2"}).ok());
  cluster.Kill("ps", 0);
  REQUIRE(cluster.Start("ps", 0, {"--checkpoint-dir", dir.path()}).ok());
  const std::string log = cluster.Log("ps", 0);
  INFO(OneLine(log));
  CHECK(log.find("skipping checkpoint " + dir.File(2)) != std::string::npos);
  CHECK(log.find("restored on start: step 1 from " + dir.File(1)) != std::string::npos);
  auto ps_client = cluster.Connect("ps", 0);
  REQUIRE(ps_client.ok());
  CHECK(ReadW(**ps_client) == std::vector<float>{1, 2});
}

struct Ran {
  int code = -1;
  std::string out, err;
};

// Runs the tfctl under test (TFCTL) with `args` (split at spaces),
// capturing its output; one that has not ended within a minute fails.
Ran Tfctl(const std::string& args) {
  std::vector<std::string> argv{testing::TfctlBinary()};
  std::istringstream words(args);
  for (std::string w; words >> w;) argv.push_back(w);
  auto run = testing::RunProcess(argv, 60s);
  INFO(run.status().ToString());
  REQUIRE(run.ok());
  return Ran{run->exit_status, run->out, run->err};
}

TEST_CASE("tfctl checkpoint save, list and restore, and their errors") {
  ScratchDir dir;
  LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.Start("ps", 0, {"--checkpoint-dir", dir.path()}).ok());
  REQUIRE(cluster.Start("worker", 0).ok());
  const std::string target = "--target " + cluster.Address("worker", 0) + " --timeout 20";
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  REQUIRE((*client)->CreateSession(SetterGraph()).ok());
  REQUIRE(RunTargets(**client, {"set1", "step7"}).ok());
  auto ps_reader = cluster.Connect("ps", 0);
  REQUIRE(ps_reader.ok());

  Ran save = Tfctl("checkpoint save --step 3 " + target);
  INFO(OneLine(save.out + save.err));
  CHECK(save.code == 0);
  CHECK(save.out.find("saved step 3") != std::string::npos);
  CHECK(save.out.find(dir.File(3)) != std::string::npos);
  CHECK(save.out.find("skipped: no checkpoint directory") != std::string::npos);

  REQUIRE(RunTargets(**client, {"set2"}).ok());
  Ran save_json = Tfctl("checkpoint save " + target + " --output json");  // at global_step = 7
  INFO(OneLine(save_json.out + save_json.err));
  CHECK(save_json.code == 0);
  CHECK(save_json.out.find("\"action\": \"save\"") != std::string::npos);
  CHECK(save_json.out.find("\"step\": 7") != std::string::npos);

  Ran list = Tfctl("checkpoint list " + target);
  INFO(OneLine(list.out + list.err));
  CHECK(list.code == 0);
  CHECK(list.out.find(dir.File(3)) != std::string::npos);
  CHECK(list.out.find(dir.File(7)) != std::string::npos);
  CHECK(list.out.find("CORRUPT") == std::string::npos);

  Ran list_json = Tfctl("checkpoint list " + target + " --output json");
  INFO(OneLine(list_json.out + list_json.err));
  CHECK(list_json.code == 0);
  CHECK(list_json.out.find("\"verified\": true") != std::string::npos);
  CHECK(list_json.out.find("\"verified\": false") == std::string::npos);

  Ran restore = Tfctl("checkpoint restore --step 3 " + target);
  INFO(OneLine(restore.out + restore.err));
  CHECK(restore.code == 0);
  CHECK(restore.out.find("restored step 3") != std::string::npos);
  CHECK(ReadW(**ps_reader) == std::vector<float>{1, 2});

  Ran latest = Tfctl("checkpoint restore " + target);
  INFO(OneLine(latest.out + latest.err));
  CHECK(latest.code == 0);
  CHECK(latest.out.find("restored step 7") != std::string::npos);
  CHECK(ReadW(**ps_reader) == std::vector<float>{5, 6});

  Ran missing = Tfctl("checkpoint restore --step 99 " + target);
  CHECK(missing.code == 1);
  CHECK(missing.err.find("error: NOT_FOUND: ") != std::string::npos);
  CHECK(missing.err.find("step 99") != std::string::npos);

  Ran usage = Tfctl("checkpoint list --step 3 " + target);
  CHECK(usage.code == 2);
  CHECK(usage.err.find("usage: tfctl checkpoint") != std::string::npos);
  Ran bad_action = Tfctl("checkpoint frobnicate " + target);
  CHECK(bad_action.code == 2);
}

// A save or restore holds every task's steps for its deadline and a second
// more; a deadline of 600 s asked for 601 s, past the 10 minutes
// Worker.holdSteps allows, and every save failed with INVALID_ARGUMENT.
TEST_CASE("tfctl checkpoint save and restore with --timeout 600") {
  ScratchDir dir;
  LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.Start("ps", 0, {"--checkpoint-dir", dir.path()}).ok());
  REQUIRE(cluster.Start("worker", 0).ok());
  const std::string target = "--target " + cluster.Address("worker", 0) + " --timeout 600";
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  REQUIRE((*client)->CreateSession(SetterGraph()).ok());
  REQUIRE(RunTargets(**client, {"set1", "step7"}).ok());
  for (const std::string action : {"save --step 3 ", "restore --step 3 "}) {
    Ran ran = Tfctl("checkpoint " + action + target);
    INFO(action << ": " << OneLine(ran.out + ran.err));
    CHECK(ran.code == 0);
  }
}

TEST_CASE("tfctl checkpoint save fails on UNAVAILABLE when a task dies, not at its timeout") {
  ScratchDir dir;
  LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.Start("ps", 0, {"--checkpoint-dir", dir.path()}).ok());
  REQUIRE(cluster.Start("worker", 0).ok());
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  // 256 MB on the ps, so that a save takes a while to write.
  GraphDef g;
  g.nodes = {VarOf("big", DType::kFloat32, PartialShape({64 << 20})),
             ConstOf("dims", Tensor::FromVector<int32_t>({64 << 20}), "/job:ps"),
             ConstOf("one", Tensor::Scalar(1.0f), "/job:ps"),
             Node("ones", "Fill", {"dims", "one"}, "/job:ps"),
             Node("init", "Assign", {"big", "ones"}, "")};
  REQUIRE((*client)->CreateSession(g).ok());
  REQUIRE(RunTargets(**client, {"init"}).ok());
  const std::vector<std::string> save = {testing::TfctlBinary(), "checkpoint", "save",
                                         "--target", cluster.Address("worker", 0),
                                         "--timeout", "40"};
  auto expect_unavailable = [](const StatusOr<int>& exited, const testing::ChildProcess& p) {
    INFO("stderr: " << OneLine(p.Stderr()));
    // Not the 40 s timeout: the save gives up as soon as the ps is gone.
    REQUIRE(exited.ok());
    CHECK(*exited == 1);
    CHECK(p.Stderr().find("error: UNAVAILABLE") != std::string::npos);
    CHECK(p.Stderr().find(kPs) != std::string::npos);
  };

  // Killed in the middle of the call: once the ps is writing its file.
  auto during = testing::ChildProcess::Spawn(save);
  REQUIRE(during.ok());
  INFO("stderr: " << OneLine((*during)->Stderr()));
  REQUIRE(WaitWriting(dir.path() + "/ps-0", **during, 30s));
  cluster.Kill("ps", 0);
  expect_unavailable((*during)->Wait(25s), **during);

  // Then again while it is down: two failures in a row.
  for (int i = 0; i < 2; ++i) {
    auto down = testing::ChildProcess::Spawn(save);
    REQUIRE(down.ok());
    expect_unavailable((*down)->Wait(25s), **down);
  }

  // Back (with what it restored): saving works again.
  REQUIRE(cluster.Start("ps", 0, {"--checkpoint-dir", dir.path()}).ok());
  auto again = testing::RunProcess(save, 60s);
  REQUIRE(again.ok());
  INFO("stderr: " << OneLine(again->err));
  CHECK(again->exit_status == 0);
}

TEST_CASE("tfctl checkpoint with no checkpoint directory anywhere fails clearly") {
  LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.StartAll().ok());
  const std::string target = "--target " + cluster.Address("worker", 0) + " --timeout 20";
  for (const char* action : {"save", "list", "restore"}) {
    Ran r = Tfctl(std::string("checkpoint ") + action + " " + target);
    INFO(action << ": " << OneLine(r.out + r.err));
    CHECK(r.code == 1);
    CHECK(r.err.find("error: FAILED_PRECONDITION: no task of the cluster has a checkpoint "
                     "directory") != std::string::npos);
  }
  Ran json = Tfctl("checkpoint save " + target + " --output json");
  CHECK(json.code == 1);
  CHECK(json.out.find("\"error\"") != std::string::npos);
}

}  // namespace
}  // namespace tfd
