// The step channel (daemon/distributed/step_channel.h) between tasks in
// this process, each with its own UCX worker and data plane on one event
// loop: what a task refuses (a run by another master than the registering
// one, a released handle, a master that is no task of the cluster or that
// it cannot reach), what a master does with answers (an error, an answer
// nobody waits for) and with a task whose endpoint goes while it waits —
// each twice, the channel serving on after. tests/integration/
// step_channel_test.cc runs it between tfd processes.
#include "daemon/distributed/step_channel.h"

#include <catch2/catch.hpp>
#include <kj/async-io.h>
#include <kj/async-unix.h>

#include <boost/asio/thread_pool.hpp>
#include <map>
#include <memory>

#include "common/memory_budget.h"
#include "common/resource_mgr.h"
#include "daemon/distributed/loop_inbox.h"
#include "daemon/distributed/partition_run.h"
#include "daemon/transport/data_plane.h"
#include "daemon/transport/stream_frames.h"
#include "daemon/transport/ucx_worker.h"
#include "kernels/register_all.h"

namespace tfd {
namespace {

const std::string kPs = "/job:ps/replica:0/task:0";
const std::string kMaster = "/job:worker/replica:0/task:0";
const std::string kOther = "/job:worker/replica:0/task:1";
// A task with a data plane but no step channel: it never answers.
const std::string kSilent = "/job:worker/replica:0/task:2";

struct Tasks {
  struct Task {
    std::unique_ptr<UcxWorker> ucx;
    std::unique_ptr<DataPlane> plane;
    TaskEnv env;
    std::unique_ptr<StepChannel> channel;
  };

  Tasks() {
    REQUIRE(kernels::RegisterAll(registry).ok());
    kernel_env.resources = &resources;
    kernel_env.memory = std::make_shared<MemoryBudget>(64 << 20);
    draining = inbox.Run().eagerlyEvaluate(nullptr);
    auto cluster = ClusterSpec::FromJson(
        R"({"ps": ["127.0.0.1:1"], "worker": ["127.0.0.1:2", "127.0.0.1:3", "127.0.0.1:4"]})");
    REQUIRE(cluster.ok());
    for (const std::string& name : {kPs, kMaster, kOther, kSilent}) {
      auto& t = tasks[name];
      t = std::make_unique<Task>();
      auto ucx = UcxWorker::Create(io.unixEventPort, io.provider->getTimer(), nullptr);
      REQUIRE(ucx.ok());
      t->ucx = std::move(ucx).value();
      t->plane = std::make_unique<DataPlane>(
          t->ucx.get(), io.provider->getTimer(), DataPlane::Options{},
          [](int64_t, const std::string&, StatusOr<Tensor>) {}, nullptr);
      t->env.task = name;
      t->env.cluster = *cluster;
      t->env.registry = &registry;
      t->env.kernel_env = &kernel_env;
      t->env.pool = &pool;
      t->env.loop = &inbox;
      t->env.data_plane = t->plane.get();
      // A second of grace for lost answers, not ten: their tests wait it out.
      if (name != kSilent) {
        t->channel = std::make_unique<StepChannel>(t->env, t->env.rendezvous, kj::SECONDS);
      }
    }
    // Each worker and the ps reach each other, as logins would arrange.
    for (const std::string& w : {kMaster, kOther, kSilent}) Link(w, kPs);
    Link(kSilent, kMaster);
  }
  ~Tasks() {
    for (auto& [name, t] : tasks) t->channel.reset();
    for (auto& [name, t] : tasks) t->plane.reset();
  }

  void Link(const std::string& a, const std::string& b) {
    REQUIRE(tasks[a]->plane->ConnectShared(b, tasks[b]->plane->Invite(a)).ok());
    REQUIRE(tasks[b]->plane->ConnectShared(a, tasks[a]->plane->Invite(b)).ok());
  }
  StepChannel& channel(const std::string& name) { return *tasks[name]->channel; }
  DataPlane& plane(const std::string& name) { return *tasks[name]->plane; }

  // A partition of one NoOp, offered by the ps to `master`, or why not.
  StatusOr<std::unique_ptr<StepChannel::Offer>> TryOffer(const std::string& master) {
    GraphDef g;
    g.nodes = {NodeDef{"noop", "NoOp", {}, "", {}}};
    return TryOffer(master, std::move(g));
  }
  StatusOr<std::unique_ptr<StepChannel::Offer>> TryOffer(const std::string& master, GraphDef g) {
    auto executor = MakePartitionExecutor(tasks[kPs]->env, g, master, {});
    INFO(executor.status().ToString());
    REQUIRE(executor.ok());
    using Offered = StatusOr<std::unique_ptr<StepChannel::Offer>>;
    return channel(kPs)
        .OfferTo(master, *executor, 2 * kj::SECONDS)
        .then([](std::unique_ptr<StepChannel::Offer> o) -> Offered { return o; },
              [](kj::Exception&& e) -> Offered { return StatusFromKj(e); })
        .wait(io.waitScope);
  }
  std::unique_ptr<StepChannel::Offer> Offer(const std::string& master) {
    auto offer = TryOffer(master);
    INFO(offer.status().ToString());
    REQUIRE(offer.ok());
    return std::move(offer).value();
  }

  Status Run(const std::string& master, uint64_t handle, int64_t step) {
    return Settle(channel(master).Run(kPs, handle, step, 5000, false).ignoreResult())
        .wait(io.waitScope);
  }

  kj::AsyncIoContext io = kj::setupAsyncIo();
  OpRegistry registry;
  ResourceMgr resources;
  KernelEnv kernel_env;
  boost::asio::thread_pool pool{1};
  LoopInbox inbox;
  kj::Promise<void> draining = nullptr;
  std::map<std::string, std::unique_ptr<Task>> tasks;
};

TEST_CASE("only the registering master runs a partition, and only while it is registered") {
  Tasks t;
  auto offer = t.Offer(kMaster);
  REQUIRE(offer != nullptr);
  REQUIRE(offer->handle() != 0);
  for (int64_t step = 1; step <= 3; ++step) {
    const Status ran = t.Run(kMaster, offer->handle(), step);
    INFO(ran.ToString());
    CHECK(ran.ok());
  }
  CHECK(t.channel(kPs).steps_served() == 3);
  // Traced, the answer brings the nodes the ps ran; untraced, none.
  auto traced = t.channel(kMaster).Run(kPs, offer->handle(), 10, 5000, true).wait(t.io.waitScope);
  REQUIRE(traced.nodes.size() == 1);
  CHECK(traced.nodes[0].node == "noop");
  CHECK(traced.nodes[0].op == "NoOp");
  CHECK(traced.nodes[0].end_micros >= traced.nodes[0].start_micros);
  auto untraced = t.channel(kMaster).Run(kPs, offer->handle(), 11, 5000, false).wait(t.io.waitScope);
  CHECK(untraced.nodes.empty());
  CHECK(t.channel(kPs).steps_served() == 5);

  // Another task of the cluster, twice: refused, naming both.
  for (int64_t step = 4; step <= 5; ++step) {
    const Status refused = t.Run(kOther, offer->handle(), step);
    CHECK(refused.code() == Code::kFailedPrecondition);
    CHECK(refused.message().find("registered by " + kMaster) != std::string::npos);
    CHECK(refused.message().find("not by " + kOther) != std::string::npos);
  }
  CHECK(t.channel(kPs).steps_served() == 5);
  // The master's runs go on meanwhile.
  CHECK(t.Run(kMaster, offer->handle(), 6).ok());

  // Released with its registration: NOT_FOUND, twice, naming the handle.
  const uint64_t handle = offer->handle();
  offer.reset();
  for (int64_t step = 7; step <= 8; ++step) {
    const Status gone = t.Run(kMaster, handle, step);
    CHECK(gone.code() == Code::kNotFound);
    CHECK(gone.message().find(std::to_string(handle)) != std::string::npos);
    CHECK(gone.message().find("step " + std::to_string(step) + " on " + kPs) != std::string::npos);
  }
  // A new registration is served again.
  auto again = t.Offer(kMaster);
  REQUIRE(again != nullptr);
  CHECK(again->handle() != handle);
  CHECK(t.Run(kMaster, again->handle(), 9).ok());
}

TEST_CASE("a partition is not offered to itself, to a name outside the cluster, or unreachably") {
  Tasks t;
  const std::string not_masters[] = {kPs, "/job:worker/replica:0/task:9", "/job:nope/replica:0/task:0"};
  for (const std::string& master : not_masters) {
    const Status refused = t.TryOffer(master).status();
    INFO(refused.ToString());
    CHECK(refused.code() == Code::kInvalidArgument);
    CHECK(refused.message().find("'" + master + "'") != std::string::npos);
  }
  // No endpoint to the master and no peers to log in with: it could not
  // answer the master's runs, so the registration fails, naming the master.
  t.plane(kPs).Disconnect(kMaster);
  const Status unreachable = t.TryOffer(kMaster).status();
  INFO(unreachable.ToString());
  CHECK(unreachable.code() == Code::kUnavailable);
  CHECK(unreachable.message().find("cannot reach the master " + kMaster) != std::string::npos);
}

// Over a stream the master opened, the task answers on it: the partition is
// offered and its runs answered though the task has no endpoint of its own
// to the master (and no peers to log in with). Once the master lets that
// stream go, nothing leads back: a new registration fails, naming the master.
TEST_CASE("over the master's stream a task registers and answers without reaching it itself") {
  Tasks t;
  t.plane(kPs).Disconnect(kOther);
  t.plane(kOther).Disconnect(kPs);
  auto& network = t.io.provider->getNetwork();
  auto listener = network.parseAddress("127.0.0.1:0").wait(t.io.waitScope)->listen();
  auto accepted = listener->accept();
  auto client = network.parseAddress("127.0.0.1", listener->getPort())
                    .wait(t.io.waitScope)->connect().wait(t.io.waitScope);
  auto served = accepted
                    .then([&](kj::Own<kj::AsyncIoStream> server) {
                      kj::AsyncIoStream& s = *server;
                      return stream::ReceiveHello(s).then(
                          [&, server = kj::mv(server)](stream::Hello hello) mutable {
                            return t.plane(kPs).ServeStream(hello.task, kj::mv(server), false);
                          });
                    })
                    .fork();
  t.plane(kOther)
      .ConnectStream(kPs, kj::mv(client), stream::Hello{.task = kOther}, false)
      .wait(t.io.waitScope);
  REQUIRE(t.plane(kPs).RepliesTo(kOther));
  auto offer = t.TryOffer(kOther);
  INFO(offer.status().ToString());
  REQUIRE(offer.ok());
  for (int64_t step = 1; step <= 3; ++step) {
    const Status ran = t.Run(kOther, (*offer)->handle(), step);
    INFO(ran.ToString());
    CHECK(ran.ok());
  }
  CHECK_FALSE(t.plane(kPs).Connected(kOther));  // answered on the master's stream only
  CHECK(t.plane(kOther).stats().step_messages_received == 3);
  t.plane(kOther).Disconnect(kPs);
  CHECK(served.addBranch().wait(t.io.waitScope).ok());
  CHECK_FALSE(t.plane(kPs).RepliesTo(kOther));
  const Status unreachable = t.TryOffer(kOther).status();
  INFO(unreachable.ToString());
  CHECK(unreachable.code() == Code::kUnavailable);
  CHECK(unreachable.message().find("cannot reach the master " + kOther) != std::string::npos);
}

TEST_CASE("a traced answer too large for one step message fails the run at once, saying so") {
  Tasks t;
  // Each node's trace is over a hundred bytes: 60,000 of them are more
  // than a step message carries (kMaxStepMessageBytes).
  GraphDef g;
  for (int i = 0; i < 60000; ++i) {
    g.nodes.push_back(NodeDef{std::string(100, 'n') + std::to_string(i), "NoOp", {}, "", {}});
  }
  auto offer = t.TryOffer(kMaster, std::move(g));
  INFO(offer.status().ToString());
  REQUIRE(offer.ok());
  const uint64_t handle = (*offer)->handle();
  // Without its trace the same partition's answer fits.
  CHECK(t.Run(kMaster, handle, 1).ok());
  const Status traced =
      Settle(t.channel(kMaster).Run(kPs, handle, 2, 5000, true).ignoreResult()).wait(t.io.waitScope);
  INFO(traced.ToString());
  CHECK(traced.code() == Code::kInvalidArgument);
  CHECK(traced.message().find("a step message of ") != std::string::npos);
  CHECK(traced.message().find("for step 2") != std::string::npos);
}

TEST_CASE("a master waiting on a task stops with UNAVAILABLE when its endpoint goes, twice") {
  Tasks t;
  for (int round = 0; round < 2; ++round) {
    INFO("round " << round);
    // The silent task takes the run and never answers.
    auto waiting = Settle(t.channel(kMaster).Run(kSilent, 42, 100 + round, 60000, false).ignoreResult()).fork();
    for (int i = 0; i < 20; ++i) t.io.provider->getTimer().afterDelay(kj::MILLISECONDS).wait(t.io.waitScope);
    CHECK_FALSE(waiting.addBranch().poll(t.io.waitScope));
    t.plane(kMaster).Disconnect(kSilent);
    const Status s = waiting.addBranch().wait(t.io.waitScope);
    CHECK(s.code() == Code::kUnavailable);
    CHECK(s.message().find("step " + std::to_string(100 + round) + " on " + kSilent) !=
          std::string::npos);
    // Without an endpoint a run fails at once.
    const Status no_endpoint = Settle(t.channel(kMaster).Run(kSilent, 42, 200, 60000, false).ignoreResult())
                                   .wait(t.io.waitScope);
    CHECK(no_endpoint.code() == Code::kUnavailable);
    CHECK_FALSE(t.channel(kMaster).Reaches(kSilent));
    REQUIRE(t.plane(kMaster).ConnectShared(kSilent, t.plane(kSilent).Invite(kMaster)).ok());
    CHECK(t.channel(kMaster).Reaches(kSilent));
  }
}

// The backstop for an answer lost with its task: nothing waits for ever.
// It fires the channel's grace (here 1 s) past the step's own timeout.
TEST_CASE("a run never answered ends DEADLINE_EXCEEDED past its timeout, and is cancelled there") {
  Tasks t;
  const uint64_t received_before = t.plane(kSilent).stats().step_messages_received;
  const Status s = Settle(t.channel(kMaster).Run(kSilent, 5, 400, 100, false).ignoreResult())
                       .wait(t.io.waitScope);
  CHECK(s.code() == Code::kDeadlineExceeded);
  CHECK(s.message().find("step 400 on " + kSilent) != std::string::npos);
  CHECK(s.message().find("no answer") != std::string::npos);
  // The silent task got the run, then the master's cancel.
  for (int i = 0; i < 2000 && t.plane(kSilent).stats().step_messages_received < received_before + 2;
       ++i) {
    t.io.provider->getTimer().afterDelay(kj::MILLISECONDS).wait(t.io.waitScope);
  }
  CHECK(t.plane(kSilent).stats().step_messages_received == received_before + 2);
}

// One timer looks for lost answers on the whole channel: it gives up on the
// runs past their deadline only, while others on the channel wait or are
// answered; it stops when nothing waits, and starts again with the next
// run (a second lost answer after the first is given up on too).
TEST_CASE("lost answers are given up one by one, and again after the channel was idle") {
  Tasks t;
  auto offer = t.Offer(kMaster);
  auto short_run = Settle(t.channel(kMaster).Run(kSilent, 5, 500, 100, false).ignoreResult());
  auto long_run =
      Settle(t.channel(kMaster).Run(kSilent, 5, 501, 600000, false).ignoreResult()).fork();
  // Runs answered meanwhile on the same channel end as they should.
  for (int64_t step = 1; step <= 3; ++step) CHECK(t.Run(kMaster, offer->handle(), step).ok());
  const Status lost = short_run.wait(t.io.waitScope);
  CHECK(lost.code() == Code::kDeadlineExceeded);
  CHECK(lost.message().find("step 500 on " + kSilent) != std::string::npos);
  CHECK_FALSE(long_run.addBranch().poll(t.io.waitScope));
  // Nothing waits once the long run is dropped; a later lost answer is
  // still given up on.
  { auto drop = kj::mv(long_run); }
  for (int i = 0; i < 1500; ++i) {
    t.io.provider->getTimer().afterDelay(kj::MILLISECONDS).wait(t.io.waitScope);
  }
  const Status again = Settle(t.channel(kMaster).Run(kSilent, 5, 502, 100, false).ignoreResult())
                           .wait(t.io.waitScope);
  CHECK(again.code() == Code::kDeadlineExceeded);
  CHECK(again.message().find("step 502 on " + kSilent) != std::string::npos);
}

TEST_CASE("a master takes only the answers it waits for, from the task it asked") {
  Tasks t;
  // (A code this tfd does not know: tests/transport/step_messages_test.cc.)
  auto forge = [&](const std::string& from, uint64_t graph, int64_t step, Status status) {
    REQUIRE(t.plane(from).SendStepMessage(kMaster, StepMessage::Done(graph, step, status)).ok());
  };
  auto waiting = Settle(t.channel(kMaster).Run(kSilent, 7, 300, 60000, false).ignoreResult()).fork();
  // An answer for another step, for another handle, from another task: ignored.
  forge(kSilent, 7, 301, OkStatus());
  forge(kSilent, 8, 300, OkStatus());
  forge(kPs, 7, 300, OkStatus());
  for (int i = 0; i < 50; ++i) t.io.provider->getTimer().afterDelay(kj::MILLISECONDS).wait(t.io.waitScope);
  CHECK_FALSE(waiting.addBranch().poll(t.io.waitScope));
  // The task's error comes through as itself.
  forge(kSilent, 7, 300, errors::Aborted("forged"));
  const Status s = waiting.addBranch().wait(t.io.waitScope);
  CHECK(s.code() == Code::kAborted);
  CHECK(s.message() == "forged");
  // And the next run of the handle takes its own answer.
  auto next = Settle(t.channel(kMaster).Run(kSilent, 7, 302, 60000, false).ignoreResult());
  forge(kSilent, 7, 302, OkStatus());
  CHECK(next.wait(t.io.waitScope).ok());
}

// A partition that ends inside its run (every kernel cheap) is answered at
// once and leaves nothing registered for abortStep; one that waits — here a
// _Recv of a tensor nobody sends — is registered while it waits, and the
// master dropping its run cancels it there (the task holds no step after).
TEST_CASE("a waiting partition is found by its master's cancel; one that ended holds nothing") {
  Tasks t;
  StepRegistry& held = t.tasks[kPs]->env.steps;
  auto noop = t.Offer(kMaster);
  CHECK(t.Run(kMaster, noop->handle(), 600).ok());
  CHECK(held.size() == 0);

  GraphDef g;
  g.nodes = {NodeDef{"recv", "_Recv", {}, "",
                     {{"T", DType::kFloat32},
                      {"tensor_name", std::string("never_sent")},
                      {"send_device", kMaster + "/device:CPU:0"},
                      {"recv_device", kPs + "/device:CPU:0"},
                      {"shape", PartialShape(std::vector<int64_t>{})}}}};
  auto waits = t.TryOffer(kMaster, std::move(g));
  INFO(waits.status().ToString());
  REQUIRE(waits.ok());
  auto wait_a_little = [&] {
    t.io.provider->getTimer().afterDelay(kj::MILLISECONDS).wait(t.io.waitScope);
  };
  {
    auto run = t.channel(kMaster).Run(kPs, (*waits)->handle(), 601, 60000, false);
    for (int i = 0; i < 2000 && held.size() == 0; ++i) wait_a_little();
    REQUIRE(held.size() == 1);
  }  // dropped: the master sends `cancel`
  for (int i = 0; i < 2000 && held.size() != 0; ++i) wait_a_little();
  CHECK(held.size() == 0);
  // The channel serves on.
  CHECK(t.Run(kMaster, noop->handle(), 602).ok());
  CHECK(held.size() == 0);
}

}  // namespace
}  // namespace tfd
