// Out of file descriptors, tfd stays a server: with a low RLIMIT_NOFILE and
// more idle connections than it may hold, it sheds those that have not
// logged in, a client still gets in and runs a step, and once the idle ones
// are gone all is as before.
#include <catch2/catch.hpp>
#include <signal.h>

#include "tests/integration/child_process.h"
#include "tests/integration/cluster_fixture.h"
#include "tests/integration/graph_helpers.h"
#include "tests/integration/log_lines.h"
#include "tests/integration/raw_socket.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;
using testing::Const;
using testing::LocalCluster;
using testing::Node;
using testing::OneLine;
using testing::RawSocket;
using testing::WaitForLines;

// Connects, logs in and runs a step that adds two constants.
void RunAStep(LocalCluster& cluster) {
  auto client = cluster.Connect("worker", 0, 20s);
  INFO(client.status().ToString() << "; log: " << OneLine(cluster.Log("worker", 0)));
  REQUIRE(client.ok());
  GraphDef g;
  g.nodes = {Const("x", 2.0f), Node("y", "Add", {"x", "x"}, "")};
  REQUIRE((*client)->CreateSession(g).ok());
  auto out = (*client)->Run({}, {"y"}, {}, {});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK(out->fetches[0].scalar<float>() == 4.0f);
}

TEST_CASE("out of file descriptors, tfd sheds connections that have not logged in and keeps "
          "accepting") {
  // The caps out of the way, so the file descriptor limit is what is hit.
  LocalCluster cluster({{"worker", 1}}, {"--max-connections", "100000", "--max-connections-per-peer",
                                         "100000", "--login-timeout", "120"});
  cluster.LimitOpenFiles(64);
  REQUIRE(cluster.Start("worker", 0).ok());
  auto log = [&] { return cluster.Log("worker", 0); };

  std::vector<std::unique_ptr<RawSocket>> idle;
  for (int i = 0; i < 150; ++i) {
    auto s = RawSocket::Connect(cluster.Address("worker", 0), 5s);
    REQUIRE(s.ok());
    idle.push_back(std::move(s).value());
  }
  const auto emfile = WaitForLines(log, "Too many open files", 1, 20s);
  INFO(OneLine(log()));
  REQUIRE_FALSE(emfile.empty());
  REQUIRE(kill(cluster.Pid("worker", 0), 0) == 0);

  // Shedding makes room for a client among the idle ones...
  RunAStep(cluster);
  CHECK_FALSE(WaitForLines(log, "to free a file descriptor for a new connection", 1, 10s).empty());
  int shed = 0;
  for (auto& s : idle) shed += s->WaitClosed(1ms) ? 1 : 0;
  CHECK(shed > 0);

  // ... and with the idle ones gone, all is as before, twice over.
  idle.clear();
  RunAStep(cluster);
  RunAStep(cluster);
  CHECK(kill(cluster.Pid("worker", 0), 0) == 0);
}

}  // namespace
}  // namespace tfd
