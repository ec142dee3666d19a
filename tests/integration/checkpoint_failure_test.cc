// Checkpoints that cannot be saved, on real tfd tasks: a ps whose part
// cannot be written while the worker's can (its file-size limit lowered
// under it, which fails the write as a full disk does), a checkpoint
// directory where no file can be created from the start, and SIGTERM to
// the ps in the middle of writing its part. Whatever fails, no task
// deletes the newest step complete on every task, a restore takes that
// step, the trainer goes on training and says so, and a save's answer
// matches what a restore then takes.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/resource.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "common/graph_io.h"
#include "tests/integration/child_process.h"
#include "tests/integration/cluster_fixture.h"
#include "tests/integration/graph_helpers.h"
#include "tests/integration/log_lines.h"
#include "tests/integration/raw_socket.h"
#include "tests/integration/temp_dir.h"

namespace tfd::testing {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;

const std::string kPs = "/job:ps/replica:0/task:0";

// On the ps: global_step (int64) and w (float32[w_elements], each 0.5); on
// the worker: u (float32[2]). `init` sets them; `train` adds 1 to
// global_step, fetched after it as train/global_step.
GraphDef Model(int64_t w_elements) {
  auto typed = [](DType dtype, PartialShape shape) {
    return AttrMap{{"dtype", dtype}, {"shape", shape}};
  };
  GraphDef g;
  g.nodes = {
      Node("global_step", "VariableV2", {}, "/job:ps",
           typed(DType::kInt64, PartialShape(std::vector<int64_t>{}))),
      Node("w", "VariableV2", {}, "/job:ps", typed(DType::kFloat32, PartialShape({w_elements}))),
      Node("u", "VariableV2", {}, "/job:worker", typed(DType::kFloat32, PartialShape({2}))),
      ConstOf("zero", Tensor::Scalar<int64_t>(0), "/job:ps"),
      ConstOf("one", Tensor::Scalar<int64_t>(1), "/job:ps"),
      ConstOf("dims", Tensor::FromVector<int32_t>({static_cast<int32_t>(w_elements)}), "/job:ps"),
      Const("half", 0.5f, "/job:ps"),
      Node("fill", "Fill", {"dims", "half"}, "/job:ps"),
      ConstOf("u0", Tensor::FromVector<float>({1, 2}), "/job:worker"),
      Node("init_step", "Assign", {"global_step", "zero"}, "/job:ps"),
      Node("init_w", "Assign", {"w", "fill"}, "/job:ps"),
      Node("init_u", "Assign", {"u", "u0"}, "/job:worker"),
      Node("init", "NoOp", {"^init_step", "^init_w", "^init_u"}, ""),
      Node("inc", "AssignAdd", {"global_step", "one"}, "/job:ps"),
      Node("train/global_step", "Identity", {"inc"}, "/job:ps"),
      Node("train", "NoOp", {"^inc"}, ""),
  };
  return g;
}

// A write past a file-size limit raises SIGXFSZ, which would kill the
// task: the tasks this test starts ignore it (an ignored signal stays
// ignored across exec), so the write fails with EFBIG, UNAVAILABLE as a
// full disk's ENOSPC is.
class IgnoreFileSizeSignal {
 public:
  IgnoreFileSizeSignal() : old_(::signal(SIGXFSZ, SIG_IGN)) {}
  ~IgnoreFileSizeSignal() { ::signal(SIGXFSZ, old_); }

 private:
  sighandler_t old_;
};

// `pid`'s files may grow to `bytes` from now on (RLIM_INFINITY: any size).
void LimitFileSize(pid_t pid, rlim_t bytes) {
  rlimit limit{bytes, RLIM_INFINITY};
  INFO("prlimit: " << std::strerror(errno));
  REQUIRE(::prlimit(pid, RLIMIT_FSIZE, &limit, nullptr) == 0);
}

std::set<std::string> Names(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.insert(e.path().filename().string());
  }
  return names;
}

// The steps of the checkpoints each task with a directory keeps, by task.
std::map<std::string, std::set<int64_t>> Kept(Client& client) {
  auto listed = client.ListCheckpoints(30s, /*verify=*/true);
  INFO(listed.status().ToString());
  REQUIRE(listed.ok());
  std::map<std::string, std::set<int64_t>> kept;
  for (const TaskCheckpoints& t : *listed) {
    if (t.directory.empty()) continue;
    for (const CheckpointInfo& c : t.checkpoints) {
      INFO(c.path << ": " << c.problem);
      CHECK(c.verified);
      kept[t.task].insert(c.step);
    }
  }
  return kept;
}

// The step a restore of the newest checkpoint on every task takes.
int64_t RestoreLatest(Client& client) {
  auto restored = client.RestoreCheckpoint(Client::kLatestCheckpoint, 30s);
  INFO(restored.status().ToString());
  REQUIRE(restored.ok());
  REQUIRE(!restored->empty());
  REQUIRE(!restored->front().checkpoints.empty());
  return restored->front().checkpoints.front().step;
}

// The value of `sample` on `job`:`task`'s /metrics (it runs with
// --http-listen 127.0.0.1:0 and logs its port).
double Metric(LocalCluster& cluster, const std::string& job, int task, const std::string& sample) {
  auto logged = WaitForLines([&] { return cluster.Log(job, task); }, "over HTTP on", 1, 10s);
  REQUIRE(logged.size() == 1);
  std::smatch port;
  REQUIRE(std::regex_search(logged[0], port, std::regex(R"(\(port (\d+)\))")));
  auto s = RawSocket::Connect("127.0.0.1:" + port[1].str(), 5s);
  REQUIRE(s.ok());
  REQUIRE((*s)->Send("GET /metrics HTTP/1.1\r\nHost: tfd\r\n\r\n"));
  (*s)->ShutdownWrite();
  auto page = (*s)->ReadUntilClosed(10s);
  REQUIRE(page.has_value());
  std::istringstream lines(*page);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(sample + " ", 0) == 0) return std::stod(line.substr(sample.size() + 1));
  }
  FAIL("no sample " << sample << " in /metrics: " << OneLine(*page));
  return -1;
}

// Every JSON record `tfctl train` has printed so far.
std::vector<Json> Records(const ChildProcess& run) {
  std::vector<Json> records;
  std::istringstream lines(run.Stdout());
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line[0] == '{') records.push_back(Json::parse(line));
  }
  return records;
}

std::vector<Json> Events(const std::vector<Json>& records, const std::string& event) {
  std::vector<Json> out;
  for (const Json& r : records) {
    if (r.value("event", "") == event) out.push_back(r);
  }
  return out;
}

// `tfctl train` on worker:0 of `cluster` as the chief, with JSON records.
std::unique_ptr<ChildProcess> SpawnTrainer(LocalCluster& cluster, const std::string& graph,
                                           std::vector<std::string> flags) {
  std::vector<std::string> argv{TfctlBinary(), "train", graph, "--target",
                                cluster.Address("worker", 0), "--output", "json",
                                "--init-timeout", "30", "--step-timeout", "30"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  auto run = ChildProcess::Spawn(argv);
  REQUIRE(run.ok());
  return std::move(run).value();
}

std::string GraphFile(const TempDir& dir, int64_t w_elements) {
  const std::string path = dir.path() + "/model.pbtxt";
  REQUIRE(SaveGraph(Model(w_elements), path, GraphFormat::kText).ok());
  return path;
}

// Polls until `done()`, at most `timeout`; false if it never was.
bool WaitUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

TEST_CASE("a ps whose part cannot be written: nothing older goes anywhere, restore finds the "
          "last complete step, the next good save moves retention on; a refused commit is "
          "taken back") {
  IgnoreFileSizeSignal ignore_sigxfsz;
  TempDir dir;
  // Keeping one checkpoint is the sharpest case: a task that pruned after
  // its own part of a failed save would keep nothing the others have.
  LocalCluster cluster({{"ps", 1}, {"worker", 1}},
                       {"--checkpoint-dir=" + dir.path(), "--checkpoint-keep=1"});
  REQUIRE(cluster.Start("ps", 0).ok());
  REQUIRE(cluster.Start("worker", 0, {"--http-listen", "127.0.0.1:0"}).ok());
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  Client& c = **client;
  REQUIRE(c.CreateSession(Model(1 << 16)).ok());  // w: 256 KiB
  REQUIRE(c.Run({}, {}, {"init"}, {}).ok());
  REQUIRE(c.SaveCheckpoint(1, 30s).ok());
  const std::string ps_dir = dir.path() + "/ps-0", worker_dir = dir.path() + "/worker-0";

  // The ps's files may no longer grow past 64 KiB: its part fails as on a
  // full disk, the worker's (a few bytes) is written. Twice.
  LimitFileSize(cluster.Pid("ps", 0), 64 << 10);
  for (int64_t step : {2, 3}) {
    INFO("step " << step);
    auto saved = c.SaveCheckpoint(step, 30s);
    REQUIRE_FALSE(saved.ok());
    const std::string error = saved.status().message();
    INFO(error);
    CHECK(saved.status().code() == Code::kUnavailable);
    CHECK(Contains(error, kPs));
    CHECK(Contains(error, std::strerror(EFBIG)));
    CHECK(Contains(error, ps_dir + "/ckpt-" + std::to_string(step) + ".tfdckpt"));
    // Nothing of the failed step is left, and step 1 is still on both.
    CHECK(Names(ps_dir) == std::set<std::string>{"ckpt-1.tfdckpt"});
    CHECK(Names(worker_dir) == std::set<std::string>{"ckpt-1.tfdckpt"});
    CHECK(RestoreLatest(c) == 1);
  }
  CHECK(Metric(cluster, "worker", 0, "tfd_checkpoint_save_failures_total") == 2);
  CHECK(Metric(cluster, "worker", 0, "tfd_cluster_checkpoints_saved_total") == 1);

  // Room again: the next save completes, and only then does step 1 go.
  LimitFileSize(cluster.Pid("ps", 0), RLIM_INFINITY);
  auto saved = c.SaveCheckpoint(4, 30s);
  INFO(saved.status().ToString());
  REQUIRE(saved.ok());
  CHECK(Names(ps_dir) == std::set<std::string>{"ckpt-4.tfdckpt"});
  CHECK(Names(worker_dir) == std::set<std::string>{"ckpt-4.tfdckpt"});
  CHECK(RestoreLatest(c) == 4);
  CHECK(Metric(cluster, "worker", 0, "tfd_cluster_checkpoints_saved_total") == 2);

  // A commit the ps refuses (a directory where its checkpoint would go):
  // the worker, which committed, takes its commit back.
  std::filesystem::create_directories(ps_dir + "/ckpt-5.tfdckpt/in-the-way");
  auto refused = c.SaveCheckpoint(5, 30s);
  INFO(refused.status().ToString());
  REQUIRE_FALSE(refused.ok());
  CHECK(Contains(refused.status().message(), kPs));
  CHECK(Contains(refused.status().message(), ps_dir + "/ckpt-5.tfdckpt"));
  CHECK(Names(worker_dir) == std::set<std::string>{"ckpt-4.tfdckpt"});
  CHECK(Names(ps_dir) == std::set<std::string>{"ckpt-4.tfdckpt", "ckpt-5.tfdckpt"});
  CHECK(RestoreLatest(c) == 4);
  CHECK(Metric(cluster, "worker", 0, "tfd_checkpoint_save_failures_total") == 3);
}

std::set<int64_t> Common(const std::set<int64_t>& a, const std::set<int64_t>& b) {
  std::set<int64_t> out;
  for (int64_t x : a) {
    if (b.count(x)) out.insert(x);
  }
  return out;
}

// A file-size limit lowered under the ps mid-run, later lifted: the trainer
// neither stops nor recovers, tries once per interval meanwhile, and saves
// again once the ps can write.
TEST_CASE("the ps's checkpoints fail mid-training: the trainer goes on, says so, tries again an "
          "interval later, and saves again once it can") {
  IgnoreFileSizeSignal ignore_sigxfsz;
  TempDir dir, files;
  LocalCluster cluster({{"ps", 1}, {"worker", 1}}, {"--checkpoint-dir=" + dir.path()});
  REQUIRE(cluster.Start("ps", 0).ok());
  REQUIRE(cluster.Start("worker", 0, {"--http-listen", "127.0.0.1:0"}).ok());
  // Far more steps than the test lets run: it stops the trainer.
  auto run = SpawnTrainer(cluster, GraphFile(files, 1 << 16),
                          {"--checkpoint-every", "10", "--steps", "100000000"});
  auto ps = cluster.Connect("ps", 0);
  REQUIRE(ps.ok());
  auto global_step = [&]() -> int64_t {
    auto v = (*ps)->ReadVariable("global_step", 5s);
    return v.ok() && v->first.initialized ? v->second.scalar<int64_t>() : -1;
  };
  auto failures = [&] { return Events(Records(*run), "checkpoint_failed"); };
  INFO("trainer: " << OneLine(run->Stderr()));
  REQUIRE(WaitUntil([&] { return global_step() >= 30; }, 60s));

  LimitFileSize(cluster.Pid("ps", 0), 64 << 10);
  REQUIRE(WaitUntil([&] { return failures().size() >= 3; }, 60s));
  // Meanwhile a step complete on both tasks is still there for a restore.
  auto worker = cluster.Connect("worker", 0);
  REQUIRE(worker.ok());
  auto kept = Kept(**worker);
  CHECK_FALSE(Common(kept[kPs], kept["/job:worker/replica:0/task:0"]).empty());

  LimitFileSize(cluster.Pid("ps", 0), RLIM_INFINITY);
  const double saved = Metric(cluster, "worker", 0, "tfd_cluster_checkpoints_saved_total");
  REQUIRE(WaitUntil(
      [&] { return Metric(cluster, "worker", 0, "tfd_cluster_checkpoints_saved_total") > saved; },
      60s));
  run->Signal(SIGTERM);  // it stops after the running step, and saves
  auto status = run->Wait(60s);
  REQUIRE(status.ok());
  CHECK(*status == 128 + SIGTERM);
  const std::vector<Json> records = Records(*run);
  REQUIRE(!records.empty());
  const Json& done = records.back();
  INFO(done.dump());
  REQUIRE(done["event"] == "done");
  CHECK(done["recoveries"] == 0);
  const std::vector<Json> failed = Events(records, "checkpoint_failed");
  CHECK(done["checkpoint_failures"] == failed.size());
  CHECK(Metric(cluster, "worker", 0, "tfd_checkpoint_save_failures_total") == failed.size());
  // Once per interval: each failure at a later multiple of 10 than the last.
  int64_t previous = -1;
  for (size_t i = 0; i < failed.size(); ++i) {
    const std::string error = failed[i]["error"];
    INFO(failed[i].dump());
    CHECK(Contains(error, kPs));
    CHECK(Contains(error, std::strerror(EFBIG)));
    CHECK(Contains(error, dir.path() + "/ps-0/ckpt-"));
    CHECK(failed[i]["failures_in_a_row"] == i + 1);
    const int64_t at = failed[i]["global_step"];
    CHECK(at / 10 > previous / 10);
    previous = at;
  }
  CHECK(Contains(run->Stderr(), "checkpoint FAILED"));
  // The final save is the newest complete step, and no pending part is left.
  CHECK(RestoreLatest(**worker) == done["global_step"].get<int64_t>());
  for (const std::string task : {"ps-0", "worker-0"}) {
    for (const std::string& name : Names(dir.path() + "/" + task)) {
      INFO(task << ": " << name);
      CHECK(std::regex_match(name, std::regex(R"(ckpt-\d+\.tfdckpt)")));
    }
  }
}

// Each task's directory is /sys/kernel, where no file can be created, root
// or not (EACCES; EROFS where /sys is mounted read-only): as a read-only
// checkpoint directory is.
TEST_CASE("a checkpoint directory no file can be created in: the trainer trains to the end, says "
          "so each interval, and its final save fails the run") {
  TempDir dir, files;
  REQUIRE(std::filesystem::is_directory("/sys/kernel"));
  for (const char* task : {"ps-0", "worker-0"}) {
    std::filesystem::create_directory_symlink("/sys/kernel", dir.path() + "/" + task);
  }
  LocalCluster cluster({{"ps", 1}, {"worker", 1}}, {"--checkpoint-dir=" + dir.path()});
  REQUIRE(cluster.Start("ps", 0).ok());
  REQUIRE(cluster.Start("worker", 0, {"--http-listen", "127.0.0.1:0"}).ok());
  auto run = SpawnTrainer(cluster, GraphFile(files, 16),
                          {"--checkpoint-every", "20", "--steps", "60"});
  auto status = run->Wait(120s);
  INFO("trainer: " << OneLine(run->Stderr()) << " | " << OneLine(run->Stdout()));
  REQUIRE(status.ok());
  CHECK(*status == 1);
  std::vector<int64_t> steps;
  for (const Json& f : Events(Records(*run), "checkpoint_failed")) {
    const std::string error = f["error"];
    INFO(error);
    CHECK((Contains(error, std::strerror(EACCES)) || Contains(error, std::strerror(EROFS))));
    steps.push_back(f["global_step"]);
  }
  // Before the first step (the chief initialized the variables), at 20, 40
  // and 60, and once more as the final save.
  CHECK(steps == std::vector<int64_t>{0, 20, 40, 60, 60});
  CHECK(Contains(run->Stderr(), "checkpoint FAILED"));
  CHECK(Contains(run->Stderr(), "error: FAILED_PRECONDITION: the final checkpoint"));
  auto ps = cluster.Connect("ps", 0);
  REQUIRE(ps.ok());
  auto global_step = (*ps)->ReadVariable("global_step", 5s);
  REQUIRE(global_step.ok());
  CHECK(global_step->second.scalar<int64_t>() == 60);
  CHECK(Metric(cluster, "worker", 0, "tfd_checkpoint_save_failures_total") == 5);
  CHECK(Metric(cluster, "worker", 0, "tfd_cluster_checkpoints_saved_total") == 0);
}

// The ps is stopped (SIGTERM) as soon as its part's temporary file appears;
// a task that stops mid-save finishes writing the file it had begun. The
// save must be answered OK only if a restore then takes its step, and
// otherwise leave nothing a restore would take.
TEST_CASE("SIGTERM to the ps while it writes its part: the save's answer is what a restore takes") {
  TempDir dir;
  LocalCluster cluster({{"ps", 1}, {"worker", 1}}, {"--checkpoint-dir=" + dir.path()});
  REQUIRE(cluster.StartAll().ok());
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  Client& c = **client;
  REQUIRE(c.CreateSession(Model(16 << 20)).ok());  // w: 64 MiB, a part that takes a while
  REQUIRE(c.Run({}, {}, {"init"}, {}).ok());
  REQUIRE(c.SaveCheckpoint(1, 60s).ok());
  const std::string ps_dir = dir.path() + "/ps-0";
  int64_t complete = 1;
  int cut_short = 0;
  for (int64_t step = 2; step <= 4; ++step) {
    INFO("step " << step);
    Status answer = errors::Internal("no answer");
    std::atomic<bool> answered{false};
    std::thread saver([&] {
      auto io = kj::setupAsyncIo();
      auto saving = Client::Connect(io, cluster.Address("worker", 0), "", 10s);
      answer = saving.ok() ? (*saving)->SaveCheckpoint(step, 60s).status() : saving.status();
      answered = true;
    });
    const std::string temporary = ".ckpt-" + std::to_string(step) + ".tfdckpt";
    bool writing = false;
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (!writing && !answered && std::chrono::steady_clock::now() < deadline) {
      for (const std::string& name : Names(ps_dir)) writing |= name.rfind(temporary, 0) == 0;
      if (!writing) std::this_thread::sleep_for(1ms);
    }
    auto stopped = cluster.Stop("ps", 0, 60s);
    saver.join();
    CHECK(stopped.ok());
    cut_short += writing ? 1 : 0;
    INFO("answer: " << answer.ToString() << (writing ? "; stopped mid-write" : ""));
    REQUIRE(cluster.Start("ps", 0).ok());
    const int64_t restored = RestoreLatest(c);
    if (answer.ok()) {
      CHECK(restored == step);
      complete = step;
    } else {
      CHECK(restored == complete);
    }
  }
  // The stop came while the ps was writing in at least one round (else
  // this test showed nothing).
  CHECK(cut_short > 0);
}

}  // namespace
}  // namespace tfd::testing
