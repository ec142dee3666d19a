// The training loop with hooks (daemon/client/training/training_session.h)
// driven by fake hooks against one real tfd: the order of the calls, a hook
// stopping the loop, a hook's own fetch, and End after a stop and after an
// error; on a ps and a worker, a recovery whose own run passes its
// deadline; and a task that refuses the chief, which no wait can mend.
#include <catch2/catch.hpp>

#include "daemon/client/training/stop_at_step_hook.h"
#include "daemon/client/training/training_session.h"
#include "tests/integration/cluster_fixture.h"
#include "tests/integration/graph_helpers.h"
#include "tests/integration/log_lines.h"
#include "tests/integration/temp_dir.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;
using testing::Contains;
using testing::LocalCluster;
using testing::Node;
using testing::TempDir;
using training::SessionHook;
using training::StepArgs;
using training::StepValues;
using training::TrainingSession;

// global_step, moved by 1 each step (train/global_step after it), and a
// constant no step needs unless a hook fetches it.
GraphDef StepGraph() {
  auto int64_const = [](std::string name, int64_t v) {
    return Node(std::move(name), "Const", {}, "",
                {{"value", Tensor::Scalar<int64_t>(v)}, {"dtype", DType::kInt64}});
  };
  GraphDef g;
  g.nodes = {Node("global_step", "VariableV2", {}, "",
                  {{"dtype", DType::kInt64}, {"shape", PartialShape(std::vector<int64_t>{})}}),
             int64_const("zero", 0),
             int64_const("one", 1),
             int64_const("answer", 42),
             Node("init_step", "Assign", {"global_step", "zero"}, ""),
             Node("init", "NoOp", {"^init_step"}, ""),
             Node("inc", "AssignAdd", {"global_step", "one"}, ""),
             Node("train/global_step", "Identity", {"inc"}, ""),
             Node("train", "NoOp", {"^inc"}, "")};
  return g;
}

// Writes each call to a shared log as "NAME.Call", and does what the test
// sets it up to do.
class RecordingHook : public SessionHook {
 public:
  RecordingHook(std::string name, std::vector<std::string>& log) : name_(std::move(name)), log_(log) {}

  Status Begin(TrainingSession&) override { return Note("Begin"); }
  Status AfterCreateSession(TrainingSession&) override { return Note("AfterCreateSession"); }
  Status BeforeRun(TrainingSession& session, StepArgs& args) override {
    fetch_at = fetch.empty() ? -1 : args.AddFetch(fetch);
    if (fail_before_step > 0 && session.local_steps() + 1 == fail_before_step) {
      (void)Note("BeforeRun");
      return errors::Internal(name_, " failed before step ", fail_before_step);
    }
    return Note("BeforeRun");
  }
  Status AfterRun(TrainingSession& session, const StepValues& values) override {
    if (fetch_at >= 0) fetched.push_back(training::ScalarValue(values.fetches[fetch_at]));
    global_steps.push_back(session.global_step());
    if (stop_after_step > 0 && session.local_steps() == stop_after_step) {
      session.RequestStop(name_ + " asked");
    }
    return Note("AfterRun");
  }
  Status End(TrainingSession&, const Status& status) override {
    ended_with = status;
    return Note("End");
  }

  std::string fetch;           // added to every step when set
  int64_t stop_after_step = 0;
  int64_t fail_before_step = 0;
  std::vector<double> fetched;
  std::vector<int64_t> global_steps;
  std::optional<Status> ended_with;

 private:
  Status Note(const char* call) {
    log_.push_back(name_ + "." + call);
    return OkStatus();
  }
  std::string name_;
  std::vector<std::string>& log_;
  int fetch_at = -1;
};

struct Fixture {
  Fixture() : cluster({{"worker", 1}}) {
    REQUIRE(cluster.StartAll().ok());
    auto connected = cluster.Connect("worker", 0);
    REQUIRE(connected.ok());
    client = std::move(connected).value();
  }
  StatusOr<training::SessionResult> Run(std::vector<SessionHook*> hooks) {
    training::SessionOptions options;
    options.init_timeout = 30s;
    TrainingSession session(*client, StepGraph(), options, std::move(hooks));
    return session.Run();
  }
  LocalCluster cluster;
  std::unique_ptr<Client> client;
};

TEST_CASE("hooks are called in order around each step, End last") {
  Fixture f;
  std::vector<std::string> log;
  training::StopAtStepHook stop(2);
  RecordingHook a("a", log), b("b", log);
  auto result = f.Run({&stop, &a, &b});
  INFO(result.status().ToString());
  REQUIRE(result.ok());
  CHECK(result->stopped == "reached step 2");
  CHECK(result->local_steps == 2);
  CHECK(result->global_step == 2);
  CHECK(result->chief);
  CHECK(result->initialized);
  CHECK(log == std::vector<std::string>{
                   "a.Begin", "b.Begin", "a.AfterCreateSession", "b.AfterCreateSession",
                   "a.BeforeRun", "b.BeforeRun", "a.AfterRun", "b.AfterRun",    // step 1
                   "a.BeforeRun", "b.BeforeRun", "a.AfterRun", "b.AfterRun",    // step 2
                   "a.BeforeRun", "b.BeforeRun",  // the stop: no step 3
                   "a.End", "b.End"});
  CHECK(a.global_steps == std::vector<int64_t>{1, 2});
  REQUIRE(b.ended_with.has_value());
  CHECK(b.ended_with->ok());
}

TEST_CASE("a hook that requests a stop ends the loop after that step, and End follows") {
  Fixture f;
  std::vector<std::string> log;
  RecordingHook a("a", log), b("b", log);
  a.stop_after_step = 3;
  auto result = f.Run({&a, &b});
  INFO(result.status().ToString());
  REQUIRE(result.ok());
  CHECK(result->stopped == "a asked");
  CHECK(result->local_steps == 3);
  CHECK(b.global_steps == std::vector<int64_t>{1, 2, 3});  // b's AfterRun still saw step 3
  REQUIRE(b.ended_with.has_value());
  CHECK(b.ended_with->ok());
  CHECK(log.back() == "b.End");
}

TEST_CASE("a hook's fetch comes back with the step, and only its steps pay for it") {
  Fixture f;
  std::vector<std::string> log;
  training::StopAtStepHook stop(3);
  RecordingHook plain("plain", log), asking("asking", log);
  asking.fetch = "answer";
  auto result = f.Run({&stop, &plain, &asking});
  INFO(result.status().ToString());
  REQUIRE(result.ok());
  CHECK(asking.fetched == std::vector<double>{42, 42, 42});
  CHECK(plain.fetched.empty());
  CHECK(asking.global_steps == std::vector<int64_t>{1, 2, 3});
}

TEST_CASE("End is called with the error that ended the loop") {
  Fixture f;
  std::vector<std::string> log;
  RecordingHook failing("failing", log), other("other", log);
  failing.fail_before_step = 2;
  auto result = f.Run({&failing, &other});
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == Code::kInternal);
  CHECK(other.global_steps == std::vector<int64_t>{1});  // step 2 never ran
  REQUIRE(other.ended_with.has_value());
  CHECK(other.ended_with->code() == Code::kInternal);
  CHECK(log.back() == "other.End");
  CHECK(std::count(log.begin(), log.end(), "other.BeforeRun") == 1);  // not after the failure
}

// A hook that kills the ps after `step` and starts it again, as a
// supervisor would: the next step fails UNAVAILABLE.
class PsKiller : public SessionHook {
 public:
  PsKiller(LocalCluster& cluster, int64_t step) : cluster_(cluster), step_(step) {}
  Status AfterRun(TrainingSession& session, const StepValues&) override {
    if (session.local_steps() != step_) return OkStatus();
    cluster_.Kill("ps", 0);
    return cluster_.Start("ps", 0);
  }

 private:
  LocalCluster& cluster_;
  int64_t step_;
};

// The step graph with its global step on the ps, and an init that must
// first take an element from the queue "gate" there: until the test puts
// one in, the chief's init run waits, to its step deadline.
GraphDef GatedStepGraph() {
  GraphDef g = StepGraph();
  for (NodeDef& n : g.nodes) {
    if (n.name == "global_step") n.device = "/job:ps/task:0";
  }
  g.nodes.push_back(testing::ScalarQueue("gate", "/job:ps/task:0", 4, "gate"));
  g.nodes.push_back(testing::ScalarDequeue("pass", "gate", "/job:ps/task:0"));
  for (NodeDef& n : g.nodes) {
    if (n.name == "init") n.inputs.push_back("^pass");
  }
  return g;
}

// What opens the gate once: the queue "gate" on the ps, and one element put in.
GraphDef GateOpener() {
  GraphDef g = GatedStepGraph();
  g.nodes.push_back(Node("element", "Const", {}, "/job:ps/task:0",
                         {{"value", Tensor::Scalar(1.0f)}, {"dtype", DType::kFloat32}}));
  g.nodes.push_back(Node("open", "QueueEnqueue", {"gate", "element"}, "/job:ps/task:0",
                         {{"Tcomponents", std::vector<DType>{DType::kFloat32}}}));
  return g;
}

// A chaos run caught this: the ps stopped while the chief initialized its
// new session during a recovery, the init run passed its step deadline, and
// the trainer gave up although the same deadline in a step is recovered
// from. Here the ps restarts between two steps without a checkpoint (the
// next step is ABORTED, not a FAILED_PRECONDITION for the variable that
// started over), the init run of the first recovery waits at the gate to
// its deadline, and the second recovery finds the gate open.
TEST_CASE("a ps restarted between steps, then a deadline inside the recovery: training goes on") {
  LocalCluster cluster({{"ps", 1}, {"worker", 1}});
  REQUIRE(cluster.StartAll().ok());
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  auto open_gate = [&]() -> Status {
    TFD_ASSIGN_OR_RETURN(auto opener, cluster.Connect("worker", 0));
    TFD_RETURN_IF_ERROR(opener->CreateSession(GateOpener()));
    return opener->Run({}, {}, {"open"}, {}).status();
  };
  const Status first = open_gate();  // for the first initialization
  INFO(first.ToString());
  REQUIRE(first.ok());

  training::SessionOptions options;
  options.step_timeout = 1s;
  options.init_timeout = 30s;
  std::vector<int> recoveries;
  std::vector<Code> why;
  Status opened;
  options.on_recovery = [&](const Status& lost, int recovery) {
    recoveries.push_back(recovery);
    why.push_back(lost.code());
    if (recovery == 2) opened = open_gate();  // the restarted ps's queue, made anew
  };
  PsKiller killer(cluster, 2);
  training::StopAtStepHook stop(5);
  TrainingSession session(**client, GatedStepGraph(), options, {&killer, &stop});
  auto result = session.Run();
  INFO(result.status().ToString());
  REQUIRE(result.ok());
  CHECK(opened.ok());
  CHECK(recoveries == std::vector<int>{1, 2});
  // The step after the restart: ABORTED, as TF1 answers a step on a
  // restarted task (its variable had started over uninitialized).
  CHECK(why == std::vector<Code>{Code::kAborted, Code::kDeadlineExceeded});
  CHECK(result->recoveries == 2);
  CHECK(result->stopped == "reached step 5");
  CHECK(result->global_step == 5);  // initialized again: no checkpoint to restore
  CHECK(result->local_steps == 7);  // 2 before the restart, 5 after
}

// A task started with another token refuses the chief's master: the wait
// for the cluster fails at once with the refusal, as it is, not as a
// deadline to be waited out (nor "not ready within" a time not waited).
TEST_CASE("a task that refuses the chief's login ends the run with UNAUTHENTICATED, naming it") {
  TempDir dir;
  const std::string token = dir.WriteSecret("token", testing::kToken);
  const std::string other = dir.WriteSecret("other", testing::kWrongToken);
  LocalCluster cluster({{"worker", 2}});
  REQUIRE(cluster.Spawn("worker", 0, {"--auth-token-file", token}).ok());
  REQUIRE(cluster.Spawn("worker", 1, {"--auth-token-file", other}).ok());
  auto client = Client::Connect(cluster.io(), cluster.Address("worker", 0), testing::kToken, 20s);
  INFO(client.status().ToString());
  REQUIRE(client.ok());
  training::SessionOptions options;
  options.init_timeout = 60s;
  TrainingSession session(**client, StepGraph(), options, {});
  auto result = session.Run();
  INFO(result.status().ToString());
  CHECK(result.status().code() == Code::kUnauthenticated);
  CHECK(Contains(result.status().message(), "/job:worker/replica:0/task:1"));
  CHECK_FALSE(Contains(result.status().message(), "not ready within"));
}

}  // namespace
}  // namespace tfd
