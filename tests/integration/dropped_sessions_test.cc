// Clients that go without closing their sessions (a process killed, a
// Client destroyed without CloseSession): their connection drops, and the
// master lets go of each of its sessions — the partitions it registered
// here and on the other task, its callables, its running steps — so that
// what /metrics and status report comes back to where it was. Two deep as
// well: connections dropped while their steps are blocked on the other
// task, and dropped in a burst while the master is still cleaning up after
// the ones before, with a client that stays connected throughout.
//
// TFD_DROP_CYCLES=N runs N cycles of each kind instead of the short default
// and prints the counts and both tasks' resident memory at the start and
// the end (docs/reliability.md).
#include <catch2/catch.hpp>
#include <sys/socket.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <optional>
#include <random>
#include <regex>
#include <sstream>
#include <thread>

#include "tests/integration/child_process.h"
#include "tests/integration/cluster_fixture.h"
#include "tests/integration/graph_helpers.h"
#include "tests/integration/log_lines.h"
#include "tests/integration/raw_socket.h"
#include "common/graph_io.h"
#include "daemon/rpc/connection.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;
using testing::Const;
using testing::LocalCluster;
using testing::Node;
using testing::OneLine;
using testing::RawSocket;
using testing::ScalarDequeue;
using testing::ScalarQueue;
using testing::WaitForLines;

// x on the ps, y = x + x on the worker: every step runs on both tasks. The
// queue is on the ps; `taken` dequeues there and crosses to the worker, so
// a step fetching it blocks on both tasks until someone enqueues.
GraphDef TwoTaskGraph() {
  GraphDef g;
  g.nodes = {
      Const("x", 3.0f, "/job:ps"),
      Node("y", "Add", {"x", "x"}, "/job:worker"),
      ScalarQueue("queue", "/job:ps", 1000, "dropped"),
      ScalarDequeue("take", "queue"),
      Node("taken", "Identity", {"take"}, "/job:worker"),
      Node("put", "QueueEnqueue", {"queue", "x"}, ""),
      Node("size", "QueueSize", {"queue"}, ""),
  };
  return g;
}

// What each task holds for sessions, from /metrics and status.
struct Counts {
  double sessions = 0, master_graphs = 0, ps_graphs = 0, master_running = 0, ps_running = 0;
  uint32_t master_held = 0, ps_held = 0;  // steps in each task's rendezvous
  bool operator==(const Counts&) const = default;
};

std::string Describe(const Counts& c) {
  std::ostringstream out;
  out << "sessions " << c.sessions << "; registered graphs: master " << c.master_graphs << ", ps "
      << c.ps_graphs << "; partitions running: master " << c.master_running << ", ps "
      << c.ps_running << "; steps held: master " << c.master_held << ", ps " << c.ps_held;
  return out.str();
}

// The HTTP port a task logged ("... over HTTP on 127.0.0.1:0 (port N)").
int HttpPort(const LocalCluster& cluster, const std::string& job) {
  auto lines = WaitForLines([&] { return cluster.Log(job, 0); }, "over HTTP on", 1, 10s);
  REQUIRE(lines.size() == 1);
  std::smatch m;
  REQUIRE(std::regex_search(lines[0], m, std::regex(R"(\(port (\d+)\))")));
  return std::stoi(m[1]);
}

// /metrics of the task serving HTTP on `port`.
std::string Metrics(int port) {
  auto s = RawSocket::Connect("127.0.0.1:" + std::to_string(port), 5s);
  REQUIRE(s.ok());
  REQUIRE((*s)->Send("GET /metrics HTTP/1.1\r\nHost: tfd\r\n\r\n"));
  (*s)->ShutdownWrite();
  auto text = (*s)->ReadUntilClosed(10s);
  REQUIRE(text.has_value());
  return *text;
}

double Value(const std::string& page, const std::string& name) {
  std::istringstream in(page);
  for (std::string line; std::getline(in, line);) {
    if (line.size() > name.size() && line.compare(0, name.size(), name) == 0 &&
        line[name.size()] == ' ') {
      return std::stod(line.substr(name.size() + 1));
    }
  }
  FAIL("no sample " << name << " on /metrics");
  return -1;
}

class Observer {
 public:
  explicit Observer(LocalCluster& cluster)
      : cluster_(cluster), master_port_(HttpPort(cluster, "worker")), ps_port_(HttpPort(cluster, "ps")) {
    auto m = cluster.Connect("worker", 0);
    auto p = cluster.Connect("ps", 0);
    REQUIRE((m.ok() && p.ok()));
    master_ = std::move(m).value();
    ps_ = std::move(p).value();
  }

  Counts Read() {
    const std::string m = Metrics(master_port_), p = Metrics(ps_port_);
    auto ms = master_->GetStatus(5s);
    auto ps = ps_->GetStatus(5s);
    INFO((ms.ok() ? "" : ms.status().ToString()) << (ps.ok() ? "" : ps.status().ToString()));
    REQUIRE((ms.ok() && ps.ok()));
    Counts c{Value(m, "tfd_sessions"),      Value(m, "tfd_registered_graphs"),
             Value(p, "tfd_registered_graphs"), Value(m, "tfd_steps_running"),
             Value(p, "tfd_steps_running"), ms->data_plane.steps_held,
             ps->data_plane.steps_held};
    return c;
  }

  // Polls until `want` holds or `bound` passes; the last counts read. The
  // bound only keeps a failing test from hanging: nothing is timed.
  Counts PollUntil(const std::function<bool(const Counts&)>& want,
                   std::chrono::milliseconds bound = 30s) {
    const auto deadline = std::chrono::steady_clock::now() + bound;
    while (true) {
      Counts c = Read();
      if (want(c) || std::chrono::steady_clock::now() >= deadline) return c;
      std::this_thread::sleep_for(20ms);
    }
  }

  int64_t RssKib(const std::string& job) {
    std::ifstream in("/proc/" + std::to_string(cluster_.Pid(job, 0)) + "/status");
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
    }
    return -1;
  }

 private:
  LocalCluster& cluster_;
  const int master_port_, ps_port_;
  std::unique_ptr<Client> master_, ps_;
};

int Cycles(int fallback) {
  const char* v = std::getenv("TFD_DROP_CYCLES");
  return v != nullptr && *v != '\0' ? std::atoi(v) : fallback;
}

const std::vector<std::string> kFlags = {"--http-listen", "127.0.0.1:0"};

// A client on its own connection that can vanish as a killed process does:
// the socket is shut down under Cap'n Proto, so the task sees the
// connection end with no Finish or Release for anything it holds.
class VanishingClient {
 public:
  VanishingClient(kj::AsyncIoContext& io, const std::string& address) : io_(io) {
    auto stream = io.provider->getNetwork()
                      .parseAddress(address)
                      .then([](kj::Own<kj::NetworkAddress> a) { return a->connect().attach(kj::mv(a)); })
                      .wait(io.waitScope);
    KJ_IF_MAYBE(fd, stream->getFd()) { fd_ = *fd; }
    REQUIRE(fd_ >= 0);
    connection_ = RpcConnection::Client(kj::mv(stream));
    auto login =
        connection_->Bootstrap().castAs<proto::Gate>().loginRequest().send().wait(io.waitScope);
    master_ = login.getServices().getMaster();
    worker_ = login.getServices().getWorker();
  }

  ~VanishingClient() {
    if (fd_ >= 0) Vanish();
  }

  // createSession, and a run fetching `fetch` sent on its answer without
  // waiting for it (pipelined: the run may reach the master first).
  void StartStep(const std::string& fetch) {
    auto create = master_.createSessionRequest();
    GraphToProto(TwoTaskGraph(), create.initGraph());
    session_ = create.send().getSession();
    auto run = session_.runRequest();
    run.initFetches(1).set(0, fetch);
    run.initOptions().setTimeoutMs(120000);  // far off: the deadline ends nothing here
    step_ = run.send()
                .then([this](auto&&) { answered_ = true; },
                      [this](kj::Exception&& e) { error_ = e.getDescription().cStr(); })
                .eagerlyEvaluate(nullptr);
  }

  bool answered() const { return answered_; }
  const std::string& error() const { return error_; }

  // Worker.holdSteps for up to kHoldMs, as a saving master asks, sent
  // without waiting for the answer, which the client keeps (and with it
  // the hold) until DropHold or Vanish.
  static constexpr int64_t kHoldMs = 10 * 60 * 1000;
  void StartHold(int64_t drain_ms) {
    auto request = worker_.holdStepsRequest();
    request.setDrainMs(drain_ms);
    request.setHoldMs(kHoldMs);
    hold_ = request.send()
                .then([this](capnp::Response<proto::Worker::HoldStepsResults>&& r) {
                  held_ = kj::mv(r);
                })
                .eagerlyEvaluate(nullptr);
  }
  // Waits for the hold's answer (no steps running here).
  void AwaitHold() { hold_.wait(io_.waitScope); }
  // Waits until the task has taken every call sent so far on the worker
  // (calls on one capability arrive in order): a hold not answered yet is
  // on nonetheless.
  void Sync() { worker_.statusRequest().send().wait(io_.waitScope); }
  bool held() const { return held_ != nullptr; }
  // Gives the hold up without a word to the task: before its answer the
  // call is cancelled, after it the hold's capability is dropped.
  void DropHold() {
    hold_ = nullptr;
    held_ = nullptr;
    io_.waitScope.poll();
  }

  void Vanish() {
    ::shutdown(fd_, SHUT_RDWR);
    fd_ = -1;
    // Our side notices too; then the capabilities go, then the connection.
    io_.waitScope.poll();
    step_ = nullptr;
    hold_ = nullptr;
    held_ = nullptr;
    session_ = nullptr;
    master_ = nullptr;
    worker_ = nullptr;
    connection_ = nullptr;
  }

 private:
  kj::AsyncIoContext& io_;
  int fd_ = -1;
  kj::Own<RpcConnection> connection_;
  proto::Master::Client master_ = nullptr;
  proto::Worker::Client worker_ = nullptr;
  proto::Session::Client session_ = nullptr;
  kj::Promise<void> step_ = nullptr;
  kj::Promise<void> hold_ = nullptr;
  kj::Maybe<capnp::Response<proto::Worker::HoldStepsResults>> held_;
  bool answered_ = false;
  std::string error_;
};

TEST_CASE("clients destroyed without closing their sessions leave nothing behind on either task") {
  LocalCluster cluster({{"ps", 1}, {"worker", 1}}, kFlags);
  REQUIRE(cluster.StartAll().ok());
  Observer observer(cluster);
  const Counts before = observer.Read();
  REQUIRE(before == Counts{});
  const int64_t master_rss0 = observer.RssKib("worker"), ps_rss0 = observer.RssKib("ps");

  const int cycles = Cycles(200);
  for (int i = 0; i < cycles; ++i) {
    INFO("cycle " << i);
    auto client = cluster.Connect("worker", 0);
    REQUIRE(client.ok());
    REQUIRE((*client)->CreateSession(TwoTaskGraph(), 10s).ok());
    auto out = (*client)->Run({}, {"y"}, {}, {});
    INFO(out.status().ToString());
    REQUIRE(out.ok());
    REQUIRE(out->fetches[0].scalar<float>() == 6.0f);
    auto callable = (*client)->MakeCallable({}, {"y"}, {});
    REQUIRE(callable.ok());
    REQUIRE((*client)->RunCallable(*callable, {}, {}).ok());
    client->reset();  // no CloseSession: the connection drops with the client
  }
  const Counts after = observer.PollUntil([&](const Counts& c) { return c == before; });
  std::fprintf(stderr,
               "dropped_sessions_test: %d clients destroyed without closing\n"
               "  before: %s\n  after:  %s\n  RSS KiB: worker:0 (master) %lld -> %lld, "
               "ps:0 %lld -> %lld\n",
               cycles, Describe(before).c_str(), Describe(after).c_str(),
               static_cast<long long>(master_rss0),
               static_cast<long long>(observer.RssKib("worker")),
               static_cast<long long>(ps_rss0), static_cast<long long>(observer.RssKib("ps")));
  INFO("after: " << Describe(after));
  CHECK(after == before);
}

TEST_CASE("connections dropped mid-step, and while earlier drops are being cleaned up") {
  LocalCluster cluster({{"ps", 1}, {"worker", 1}}, kFlags);
  REQUIRE(cluster.StartAll().ok());
  Observer observer(cluster);
  kj::AsyncIoContext& io = cluster.io();
  const std::string address = cluster.Address("worker", 0);

  // A client that stays throughout, with its own session: it is baseline,
  // and it must lose nothing while the others come and go.
  auto stays = cluster.Connect("worker", 0);
  REQUIRE(stays.ok());
  REQUIRE((*stays)->CreateSession(TwoTaskGraph(), 10s).ok());
  REQUIRE((*stays)->Run({}, {"y"}, {}, {}).ok());
  const Counts before = observer.Read();
  REQUIRE(before.sessions == 1);
  const int64_t master_rss0 = observer.RssKib("worker"), ps_rss0 = observer.RssKib("ps");
  auto stays_runs = [&](const char* when) {
    INFO(when);
    auto out = (*stays)->Run({}, {"y"}, {}, {});
    INFO(out.status().ToString());
    REQUIRE(out.ok());
    CHECK(out->fetches[0].scalar<float>() == 6.0f);
  };

  SECTION("one at a time, each while its step is blocked on both tasks") {
    const int rounds = Cycles(10);
    for (int round = 0; round < rounds; ++round) {
      INFO("round " << round);
      VanishingClient c(io, address);
      c.StartStep("taken");
      // Blocked: its session, its partition on each task, running on each.
      const Counts blocked = observer.PollUntil([&](const Counts& n) {
        io.waitScope.poll();
        return n.sessions == before.sessions + 1 && n.ps_running == 1 && n.master_running == 1;
      });
      INFO("blocked: " << Describe(blocked));
      REQUIRE(blocked.ps_running == 1);
      REQUIRE(blocked.master_running == 1);
      REQUIRE(blocked.ps_graphs == before.ps_graphs + 1);
      REQUIRE(!c.answered());
      c.Vanish();
      const Counts after = observer.PollUntil([&](const Counts& n) { return n == before; });
      INFO("after: " << Describe(after) << "; master log: " << OneLine(cluster.Log("worker", 0)));
      REQUIRE(after == before);
    }
    stays_runs("after the drops");
    std::fprintf(stderr,
                 "dropped_sessions_test: %d connections dropped, one at a time, each while its "
                 "step was blocked on both tasks\n  before and after: %s\n  RSS KiB: worker:0 "
                 "(master) %lld -> %lld, ps:0 %lld -> %lld\n",
                 rounds, Describe(observer.Read()).c_str(), static_cast<long long>(master_rss0),
                 static_cast<long long>(observer.RssKib("worker")),
                 static_cast<long long>(ps_rss0), static_cast<long long>(observer.RssKib("ps")));
  }

  SECTION("in bursts: blocked steps dropped back to back, and drops at any point of a step") {
    const int burst = 16, rounds = std::max(1, Cycles(3 * burst) / burst);
    std::mt19937 rng(7);
    for (int round = 0; round < rounds; ++round) {
      INFO("round " << round);
      std::vector<std::unique_ptr<VanishingClient>> clients;
      for (int i = 0; i < burst; ++i) {
        clients.push_back(std::make_unique<VanishingClient>(io, address));
        clients.back()->StartStep("taken");
      }
      const Counts blocked = observer.PollUntil([&](const Counts& n) {
        io.waitScope.poll();
        return n.sessions == before.sessions + burst && n.ps_running == burst;
      });
      INFO("blocked: " << Describe(blocked));
      REQUIRE(blocked.ps_running == burst);
      // All at once: each drop's cleanup (aborts and releases sent to the
      // ps) is under way while the next connections end.
      for (auto& c : clients) c->Vanish();
      // Meanwhile new clients come and vanish at any point of their
      // createSession, registration or step, some before the master has
      // read a byte of their run.
      for (int i = 0; i < burst; ++i) {
        VanishingClient c(io, address);
        c.StartStep(i % 2 == 0 ? "taken" : "y");
        const auto until = io.provider->getTimer().now() +
                           std::uniform_int_distribution<int>(0, 3000)(rng) * kj::MICROSECONDS;
        while (io.provider->getTimer().now() < until) {
          io.waitScope.poll();
          io.provider->getTimer().afterDelay(100 * kj::MICROSECONDS).wait(io.waitScope);
        }
      }
      stays_runs("during the cleanup");
      clients.clear();
      const Counts after = observer.PollUntil([&](const Counts& n) { return n == before; });
      INFO("after: " << Describe(after) << "; master log: " << OneLine(cluster.Log("worker", 0)));
      REQUIRE(after == before);
    }
    const Counts after = observer.Read();
    std::fprintf(stderr,
                 "dropped_sessions_test: %d rounds of %d blocked steps dropped at once, then %d "
                 "more dropped at random points of a step\n  before: %s\n  after:  %s\n  RSS KiB: "
                 "worker:0 (master) %lld -> %lld, ps:0 %lld -> %lld\n",
                 rounds, burst, burst, Describe(before).c_str(), Describe(after).c_str(),
                 static_cast<long long>(master_rss0),
                 static_cast<long long>(observer.RssKib("worker")),
                 static_cast<long long>(ps_rss0), static_cast<long long>(observer.RssKib("ps")));
  }

  // No dead step's dequeue is left waiting on the ps: an element enqueued
  // now stays in the queue until a live client takes it.
  REQUIRE((*stays)->Run({}, {}, {"put"}, {}).ok());
  auto size = (*stays)->Run({}, {"size"}, {}, {});
  REQUIRE(size.ok());
  CHECK(size->fetches[0].scalar<int32_t>() == 1);
  auto taken = (*stays)->Run({}, {"taken"}, {}, {});
  INFO(taken.status().ToString());
  REQUIRE(taken.ok());
  CHECK(taken->fetches[0].scalar<float>() == 3.0f);
}

// A hold on the master's steps (Worker.holdSteps, what a cluster checkpoint
// asks of every task) is its caller's: when the caller drops it, cancels
// the call before its answer, or its connection drops, steps started
// afterwards run at once instead of waiting out the hold's 10 minutes.
TEST_CASE("a hold on a task's steps ends when its caller drops it, cancels it or vanishes") {
  LocalCluster cluster({{"ps", 1}, {"worker", 1}}, kFlags);
  REQUIRE(cluster.StartAll().ok());
  Observer observer(cluster);
  auto& io = cluster.io();
  const std::string address = cluster.Address("worker", 0);
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  REQUIRE((*client)->CreateSession(TwoTaskGraph()).ok());
  // Far shorter than the hold: a step that runs within it was not held.
  const Client::RunOptions prompt{.timeout = 30s};
  // A step that finds the hold on waits at the gate until its deadline.
  auto expect_held = [&] {
    auto held = (*client)->Run({}, {"y"}, {}, {.timeout = 300ms});
    CHECK(held.status().code() == Code::kDeadlineExceeded);
    CHECK(held.status().message().find("checkpoint") != std::string::npos);
  };

  for (const char* how : {"drops the answered hold", "vanishes", "cancels before the answer"}) {
    INFO("the caller " << how);
    VanishingClient holder(io, address);
    const bool before_answer = std::string(how) == "cancels before the answer";
    if (before_answer) {
      // A step blocked here keeps the hold from answering.
      holder.StartStep("taken");
      const auto running = [](const Counts& c) { return c.master_running >= 1; };
      REQUIRE(running(observer.PollUntil(running)));
      holder.StartHold(VanishingClient::kHoldMs);
      holder.Sync();
    } else {
      holder.StartHold(1000);
      holder.AwaitHold();
      REQUIRE(holder.held());
    }
    expect_held();
    CHECK(holder.held() == !before_answer);
    if (std::string(how) == "vanishes") {
      holder.Vanish();
    } else {
      holder.DropHold();
    }
    auto ran = (*client)->Run({}, {"y"}, {}, prompt);
    INFO(ran.status().ToString());
    REQUIRE(ran.ok());
    CHECK(ran->fetches.at(0).scalar<float>() == 6.0f);
  }
}

}  // namespace
}  // namespace tfd
