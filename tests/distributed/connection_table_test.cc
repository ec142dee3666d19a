// ConnectionTable: connections not logged in are capped per address, logged
// in ones are not; at either cap the oldest pending connection makes room
// (of the same address at the per-address cap, so a stranger sharing it
// cannot keep others out), and when all are logged in a new one is refused,
// until one leaves — and then again.
#include "daemon/distributed/connection_table.h"

#include <sys/resource.h>

#include <catch2/catch.hpp>
#include <climits>
#include <cstdint>

#include "daemon/distributed/open_file_limit.h"

namespace tfd {
namespace {

ServerLimits Limits(int total, int per_peer) {
  ServerLimits l;
  l.max_connections = total;
  l.max_pending_per_peer = per_peer;
  return l;
}

TEST_CASE("at the per-address cap the address's oldest pending connection makes room; logged-in "
          "ones do not count") {
  ConnectionTable table(Limits(100, 2));
  auto a = table.Admit("10.0.0.7");
  auto other = table.Admit("10.0.0.8");  // older than b, but of another address
  auto b = table.Admit("10.0.0.7");
  REQUIRE((a.admitted && other.admitted && b.admitted));
  CHECK_FALSE(a.shed);
  CHECK_FALSE(b.shed);

  // A third from 10.0.0.7 is admitted, and 10.0.0.7's oldest goes.
  auto c = table.Admit("10.0.0.7");
  REQUIRE(c.admitted);
  CHECK(c.shed == a.id);
  CHECK(c.shed_reason == "to make room for a new connection from 10.0.0.7 "
                         "(--max-connections-per-peer 2)");
  CHECK(table.PendingFrom("10.0.0.7") == 2);
  CHECK(table.PendingFrom("10.0.0.8") == 1);
  CHECK(table.size() == 3);

  // Logged in, b no longer counts: the next one sheds nothing...
  table.LoggedIn(b.id);
  auto d = table.Admit("10.0.0.7");
  REQUIRE(d.admitted);
  CHECK_FALSE(d.shed);
  // ... and the one after sheds c, the oldest still pending, never b.
  auto e = table.Admit("10.0.0.7");
  REQUIRE(e.admitted);
  CHECK(e.shed == c.id);
  table.Remove(d.id);
  table.Remove(e.id);
  CHECK(table.PendingFrom("10.0.0.7") == 0);
  CHECK(table.size() == 2);  // b (logged in) and other
}

TEST_CASE("at the total cap the oldest pending connection makes room; all logged in, none is admitted") {
  ConnectionTable table(Limits(3, 100));
  auto a = table.Admit("h");
  auto b = table.Admit("h");
  auto c = table.Admit("h");
  table.LoggedIn(b.id);
  auto d = table.Admit("h");
  REQUIRE(d.admitted);
  CHECK(d.shed == a.id);  // the oldest pending, not the older logged-in one
  auto e = table.Admit("h");
  REQUIRE(e.admitted);
  CHECK(e.shed == c.id);
  CHECK(e.shed_reason == "to make room for a new connection (--max-connections 3)");
  CHECK(table.size() == 3);

  table.LoggedIn(d.id);
  table.LoggedIn(e.id);
  auto f = table.Admit("h");
  CHECK_FALSE(f.admitted);
  CHECK(f.refusal == "3 connections are open and all have logged in (--max-connections)");
  CHECK_FALSE(table.OldestPending());

  table.Remove(b.id);  // one leaves
  auto g = table.Admit("h");
  CHECK(g.admitted);
  CHECK_FALSE(g.shed);
  table.LoggedIn(g.id);
  CHECK_FALSE(table.Admit("h").admitted);  // full again
}

TEST_CASE("OldestPending follows the order of admission") {
  ConnectionTable table(Limits(10, 10));
  auto a = table.Admit("x");
  auto b = table.Admit("y");
  CHECK(table.OldestPending() == a.id);
  table.LoggedIn(a.id);
  CHECK(table.OldestPending() == b.id);
  table.Remove(b.id);
  CHECK_FALSE(table.OldestPending());
}


// Sets the soft open-file limit for the scope, then puts the old one back.
class SoftFileLimit {
 public:
  explicit SoftFileLimit(rlim_t soft) {
    REQUIRE(::getrlimit(RLIMIT_NOFILE, &saved_) == 0);
    rlimit lowered = saved_;
    lowered.rlim_cur = soft;
    REQUIRE(::setrlimit(RLIMIT_NOFILE, &lowered) == 0);
  }
  ~SoftFileLimit() { ::setrlimit(RLIMIT_NOFILE, &saved_); }
  rlim_t hard() const { return saved_.rlim_max; }

 private:
  rlimit saved_{};
};

TEST_CASE("the default cap leaves 256 descriptors of the open-file limit, and at least 64") {
  CHECK(ConnectionCapForFileLimit(1024) == 768);
  CHECK(ConnectionCapForFileLimit(524288) == 524032);
  CHECK(ConnectionCapForFileLimit(300) == 64);
  CHECK(ConnectionCapForFileLimit(0) == 64);
  CHECK(ConnectionCapForFileLimit(UINT64_MAX) == INT_MAX);
}

TEST_CASE("--max-connections 0 takes the cap from the process's open-file limit") {
  SoftFileLimit limit(256 + 70);  // room for 70 connections
  CHECK(OpenFileLimit() == 326);
  ConnectionTable table(Limits(0, 1000));
  for (int i = 0; i < 70; ++i) {
    auto a = table.Admit("10.0.0.1");
    REQUIRE(a.admitted);
    table.LoggedIn(a.id);
  }
  auto over = table.Admit("10.0.0.1");
  CHECK_FALSE(over.admitted);
  CHECK(over.refusal == "70 connections are open and all have logged in (--max-connections)");
}

TEST_CASE("tfd raises its soft open-file limit to the hard one") {
  rlimit now{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &now) == 0);
  REQUIRE(now.rlim_max > 2);
  SoftFileLimit lowered(now.rlim_max / 2);
  const std::string said = RaiseOpenFileLimit();
  CHECK_FALSE(said.empty());
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &now) == 0);
  CHECK(now.rlim_cur == now.rlim_max);
  CHECK(RaiseOpenFileLimit().empty());  // nothing left to raise
}

}  // namespace
}  // namespace tfd
