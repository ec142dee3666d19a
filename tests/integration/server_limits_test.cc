// What a peer that has not logged in may cost a real tfd: a frame header
// claiming gigabytes is refused before its body is read, a connection that
// does not log in is closed at --login-timeout, connections are capped in
// total and per address (--max-connections, --max-connections-per-peer), the
// oldest pending one making room. Logged-in clients keep what they had,
// large tensors included. Each limit is reached, freed and reached again.
// Wrong tokens, however many, never keep the right one out: not a client's,
// not a restarted task's, not while training runs.
#include <catch2/catch.hpp>
#include <signal.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "common/mutex.h"
#include "tests/integration/child_process.h"
#include "tests/integration/cluster_fixture.h"
#include "tests/integration/graph_helpers.h"
#include "tests/integration/log_lines.h"
#include "tests/integration/raw_socket.h"
#include "tests/integration/temp_dir.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;
using testing::Contains;
using testing::LinesWith;
using testing::LocalCluster;
using testing::Node;
using testing::SgdQueueGraph;
using testing::RawSocket;
using testing::Le32;
using testing::RssKib;
using testing::TempDir;
using testing::WaitForLines;

std::unique_ptr<RawSocket> Open(LocalCluster& cluster, const std::string& source_ip = "") {
  auto s = RawSocket::Connect(cluster.Address("worker", 0), 5s, source_ip);
  INFO(s.status().ToString());
  REQUIRE(s.ok());
  return std::move(s).value();
}

TEST_CASE("a frame header claiming 16 GiB before login is refused before its body is read") {
  LocalCluster cluster({{"worker", 1}});
  REQUIRE(cluster.Start("worker", 0).ok());
  const pid_t pid = cluster.Pid("worker", 0);
  const int64_t rss_before = RssKib(pid);
  REQUIRE(rss_before > 0);

  // Two in a row: the first refusal leaves the task as it was.
  const std::string mib(1 << 20, '\0');
  for (int round = 0; round < 2; ++round) {
    INFO("round " << round);
    auto s = Open(cluster);
    // One segment of 0x7ffffff0 words: what Cap'n Proto 0.9.2 would have
    // allocated for, and then filled as the bytes came.
    REQUIRE(s->Send(Le32(0) + Le32(0x7ffffff0)));
    int sent_mib = 0;
    while (sent_mib < 64 && s->Send(mib, 10s)) ++sent_mib;
    CHECK(sent_mib < 64);
    CHECK(s->WaitClosed(15s));
  }
  const int64_t rss_after = RssKib(pid);
  INFO("VmRSS " << rss_before << " KiB before, " << rss_after << " KiB after");
  CHECK(rss_after - rss_before < 32 * 1024);
  auto lines = WaitForLines([&] { return cluster.Log("worker", 0); }, "pre-login limit is", 2, 10s);
  CHECK(lines.size() == 2);
  for (const auto& line : lines) {
    CHECK(Contains(line, "connection from 127.0.0.1:"));
    CHECK(Contains(line, "17179869064 bytes"));
  }

  // After login the limit is gone: 4 MiB in, 4 MiB out.
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());
  GraphDef g;
  g.nodes = {Node("x", "Placeholder", {}, "", {{"dtype", DType::kFloat32}}),
             Node("y", "Identity", {"x"}, "")};
  REQUIRE((*client)->CreateSession(g).ok());
  const std::vector<float> big(1 << 20, 1.5f);
  auto out = (*client)->Run({{"x", Tensor::FromVector(big)}}, {"y"}, {}, {});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK(out->fetches[0].num_elements() == (1 << 20));
  CHECK(out->fetches[0].data<float>()[(1 << 20) - 1] == 1.5f);
}

TEST_CASE("a connection that has not logged in by --login-timeout is closed; a logged-in one stays") {
  LocalCluster cluster({{"worker", 1}}, {"--login-timeout", "1"});
  REQUIRE(cluster.Start("worker", 0).ok());
  auto client = cluster.Connect("worker", 0);
  REQUIRE(client.ok());

  // Silent, then half a frame header: both closed, each once.
  auto silent = Open(cluster);
  auto partial = Open(cluster);
  REQUIRE(partial->Send(Le32(0)));
  CHECK(silent->WaitClosed(15s));
  CHECK(partial->WaitClosed(15s));
  auto lines = WaitForLines([&] { return cluster.Log("worker", 0); }, "no login within 1 s", 2, 10s);
  CHECK(lines.size() == 2);

  // The client logged in before either, so its deadline has passed too.
  auto status = (*client)->GetStatus(5s);
  INFO(status.status().ToString());
  CHECK(status.ok());
}

TEST_CASE("--max-connections: the oldest connection not logged in makes room; when all are "
          "logged in a new one is refused until one leaves") {
  LocalCluster cluster({{"worker", 1}}, {"--max-connections", "4", "--max-connections-per-peer",
                                         "100", "--login-timeout", "60"});
  REQUIRE(cluster.Start("worker", 0).ok());
  auto log = [&] { return cluster.Log("worker", 0); };
  // A logged-in client throughout; its first answer also means tfd has seen
  // the end of the connection Start() made.
  std::vector<std::unique_ptr<Client>> clients;
  auto first = cluster.Connect("worker", 0);
  REQUIRE(first.ok());
  REQUIRE((*first)->GetStatus(5s).ok());
  clients.push_back(std::move(first).value());

  // Three pending fill it; a fourth takes the place of the oldest (tfd
  // accepts in the order the connections were made).
  std::vector<std::unique_ptr<RawSocket>> idle;
  for (int i = 0; i < 4; ++i) idle.push_back(Open(cluster));
  CHECK(idle[0]->WaitClosed(15s));
  CHECK(WaitForLines(log, "to make room for a new connection", 1, 10s).size() == 1);
  for (int i = 1; i < 4; ++i) CHECK_FALSE(idle[i]->WaitClosed(200ms));
  idle.clear();

  // Logged-in clients fill it; they are never shed.
  for (int i = 0; i < 3; ++i) {
    auto c = cluster.Connect("worker", 0);
    INFO(c.status().ToString());
    REQUIRE(c.ok());
    clients.push_back(std::move(c).value());
  }
  auto refused = Open(cluster);
  CHECK(refused->WaitClosed(15s));
  CHECK(WaitForLines(log, "all have logged in (--max-connections)", 1, 10s).size() == 1);
  auto no_room = cluster.Connect("worker", 0, 2s);
  CHECK(no_room.status().code() == Code::kUnavailable);
  for (auto& c : clients) CHECK(c->GetStatus(5s).ok());

  // One leaves: room again, then full again.
  clients.pop_back();
  auto fifth = cluster.Connect("worker", 0, 15s);
  INFO(fifth.status().ToString());
  REQUIRE(fifth.ok());
  auto refused_again = Open(cluster);
  CHECK(refused_again->WaitClosed(15s));
}

TEST_CASE("--max-connections-per-peer: the address's oldest pending connection makes room, so "
          "a stranger on the same address cannot keep a client out") {
  LocalCluster cluster({{"worker", 1}}, {"--max-connections-per-peer", "2", "--login-timeout", "60"});
  REQUIRE(cluster.Start("worker", 0).ok());
  auto log = [&] { return cluster.Log("worker", 0); };
  // Its first answer also means tfd has seen the end of the connection Start() made.
  auto first = cluster.Connect("worker", 0);
  REQUIRE(first.ok());
  REQUIRE((*first)->GetStatus(5s).ok());

  auto a1 = Open(cluster);
  auto a2 = Open(cluster);
  auto a3 = Open(cluster);
  CHECK(a1->WaitClosed(15s));
  CHECK(WaitForLines(log, "to make room for a new connection from 127.0.0.1 "
                          "(--max-connections-per-peer 2)", 1, 10s).size() == 1);
  CHECK_FALSE(a2->WaitClosed(200ms));
  // Another address has its own share.
  auto other = Open(cluster, "127.0.0.2");
  CHECK_FALSE(other->WaitClosed(500ms));

  // A client from the full address gets in; a2, now the oldest, makes room.
  auto client = cluster.Connect("worker", 0, 15s);
  INFO(client.status().ToString());
  REQUIRE(client.ok());
  CHECK(a2->WaitClosed(15s));
  // Logged in, it does not count: one more fits beside a3, the next sheds a3.
  auto a4 = Open(cluster);
  CHECK_FALSE(a3->WaitClosed(500ms));
  auto a5 = Open(cluster);
  CHECK(a3->WaitClosed(15s));
  CHECK_FALSE(other->WaitClosed(200ms));
  CHECK((*client)->GetStatus(5s).ok());
}

// Logs in to a task with a wrong token on a fresh connection, again and
// again, from its own thread and event loop, until it goes; counts the
// UNAUTHENTICATED answers and keeps any other.
class Guesser {
 public:
  explicit Guesser(std::string address) : address_(std::move(address)), thread_([this] { Run(); }) {}
  ~Guesser() {
    stop_ = true;
    thread_.join();
  }
  int refused() const { return refused_; }
  std::vector<std::string> other_answers() const {
    MutexLock lock(mu_);
    return other_answers_;
  }

 private:
  void Run() {
    auto io = kj::setupAsyncIo();
    while (!stop_) {
      auto answer = Client::Connect(io, address_, testing::kWrongToken, 30s);
      if (answer.status().code() == Code::kUnauthenticated &&
          Contains(answer.status().message(), "wrong token")) {
        ++refused_;
      } else {
        MutexLock lock(mu_);
        other_answers_.push_back(answer.status().ToString());
      }
    }
  }

  const std::string address_;
  std::atomic<bool> stop_{false};
  std::atomic<int> refused_{0};
  mutable Mutex mu_;
  std::vector<std::string> other_answers_ GUARDED_BY(mu_);
  std::thread thread_;  // last: starts once the rest is built
};

TEST_CASE("wrong logins from an address never keep the right token out: not a client's, not a "
          "restarted task's, not while training runs") {
  TempDir dir;
  const std::string token_file = dir.WriteSecret("token", testing::kToken);
  // A short backoff cap keeps the test quick; the guesses are still slowed.
  LocalCluster cluster({{"ps", 1}, {"worker", 1}},
                       {"--auth-token-file", token_file, "--failed-login-max-delay", "0.5"});
  REQUIRE(cluster.Spawn("ps", 0).ok());
  REQUIRE(cluster.Spawn("worker", 0).ok());
  const std::string ps = cluster.Address("ps", 0);

  // Training: a step across the worker and the ps, before and during the guessing.
  auto trainer = Client::Connect(cluster.io(), cluster.Address("worker", 0), testing::kToken, 20s);
  INFO(trainer.status().ToString());
  REQUIRE(trainer.ok());
  REQUIRE((*trainer)->WaitCluster(20s).status().ok());
  REQUIRE((*trainer)->CreateSession(SgdQueueGraph()).ok());
  REQUIRE((*trainer)->Run({}, {}, {"init"}, {}).ok());

  // Someone on this host (127.0.0.1, as the tasks and the trainer) guesses
  // the ps's token; the trainer steps on meanwhile, each step succeeding,
  // until the ps has refused more than ten.
  int steps = 0;
  {
    Guesser guesser(ps);
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (guesser.refused() < 12 && std::chrono::steady_clock::now() < deadline) {
      auto step = (*trainer)->Run({}, {"apply"}, {}, {});
      if (!step.ok()) FAIL("step " << steps << ": " << step.status().ToString());
      ++steps;
    }
    REQUIRE(guesser.refused() >= 12);

    // The right token gets in, from the same address, while the guessing goes on.
    auto client = Client::Connect(cluster.io(), ps, testing::kToken, 10s);
    INFO(client.status().ToString());
    REQUIRE(client.ok());
    CHECK((*client)->GetStatus(5s).ok());

    // A restarted worker logs in to the ps again, and training resumes there.
    trainer->reset();
    cluster.Kill("worker", 0);
    REQUIRE(cluster.Spawn("worker", 0).ok());
    auto again = Client::Connect(cluster.io(), cluster.Address("worker", 0), testing::kToken, 20s);
    INFO(again.status().ToString());
    REQUIRE(again.ok());
    REQUIRE((*again)->CreateSession(SgdQueueGraph()).ok());
    auto step = (*again)->Run({}, {"apply"}, {}, {});
    INFO(step.status().ToString() << "; worker log: "
                                  << testing::OneLine(cluster.Log("worker", 0)));
    CHECK(step.ok());
    CHECK(guesser.other_answers().empty());
  }
  CHECK(steps > 0);
  CHECK(LinesWith(cluster.Log("ps", 0), "with a wrong token").size() >= 1);
}

}  // namespace
}  // namespace tfd
