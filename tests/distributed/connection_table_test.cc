// ConnectionTable: connections not logged in are capped per address, logged
// in ones are not; at the total cap the oldest pending one makes room, and
// when all are logged in a new one is refused, until one leaves — and then
// again.
#include "daemon/distributed/connection_table.h"

#include <catch2/catch.hpp>

namespace tfd {
namespace {

ServerLimits Limits(int total, int per_peer) {
  ServerLimits l;
  l.max_connections = total;
  l.max_pending_per_peer = per_peer;
  return l;
}

TEST_CASE("pending connections are capped per address; logged-in ones do not count") {
  ConnectionTable table(Limits(100, 2));
  auto a = table.Admit("10.0.0.7");
  auto b = table.Admit("10.0.0.7");
  REQUIRE((a.admitted && b.admitted));
  auto c = table.Admit("10.0.0.7");
  CHECK_FALSE(c.admitted);
  CHECK(c.refusal == "2 connections from 10.0.0.7 have not logged in yet (--max-connections-per-peer)");
  CHECK(table.Admit("10.0.0.8").admitted);

  table.LoggedIn(a.id);
  auto d = table.Admit("10.0.0.7");
  CHECK(d.admitted);
  CHECK_FALSE(table.Admit("10.0.0.7").admitted);  // reached again
  table.Remove(b.id);
  table.Remove(d.id);
  CHECK(table.PendingFrom("10.0.0.7") == 0);
  CHECK(table.size() == 2);
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

}  // namespace
}  // namespace tfd
