// Rendezvous keys: a loop's frame suffix is split off the edge, and a
// message names the edge and the iteration, never the frame's hash.
#include "common/rendezvous_key.h"

#include <catch2/catch.hpp>

#include "common/rendezvous.h"

namespace tfd {
namespace {

const std::string kPs = "/job:ps/replica:0/task:0/device:CPU:0";
const std::string kWorker = "/job:worker/replica:0/task:0/device:CPU:0";

TEST_CASE("a loop's frame suffix is no part of the edge") {
  const std::string key = Rendezvous::MakeKey(kPs, kWorker, "while/add:0") + ";00000000deadbeef:3";
  auto k = SplitRendezvousKey(key);
  REQUIRE(k.ok());
  CHECK(k->src_device == kPs);
  CHECK(k->dst_device == kWorker);
  CHECK(k->edge == "while/add:0");
  CHECK(k->frame == "00000000deadbeef");
  CHECK(k->iter == 3);
  auto parsed = Rendezvous::ParseKey(key);
  REQUIRE(parsed.ok());
  CHECK(parsed->edge == "while/add:0");
  CHECK(parsed->dst_device == kWorker);
}

TEST_CASE("a key outside loops splits as it is") {
  auto k = SplitRendezvousKey(Rendezvous::MakeKey(kPs, kWorker, "collective:1:7:0:p0r1"));
  REQUIRE(k.ok());
  CHECK(k->edge == "collective:1:7:0:p0r1");
  CHECK(k->frame.empty());
  CHECK(k->iter == -1);
  // A last field that is not a frame suffix stays in the edge.
  auto odd = SplitRendezvousKey(kPs + ";" + kWorker + ";a;b:1");
  REQUIRE(odd.ok());
  CHECK(odd->edge == "a;b:1");
  CHECK(SplitRendezvousKey("no-separators").status().code() == Code::kInvalidArgument);
}

TEST_CASE("a message names the edge, its ends and the iteration") {
  const std::string key = Rendezvous::MakeKey(kPs, kWorker, "while/add:0") + ";00000000deadbeef:3";
  CHECK(DescribeRendezvousKey(key) == "edge 'while/add:0' from " + kPs + " to " + kWorker +
                                          " in iteration 3 of a while loop");
  CHECK(DescribeRendezvousKey(Rendezvous::MakeKey(kPs, kWorker, "x:0")) ==
        "edge 'x:0' from " + kPs + " to " + kWorker);
  CHECK(DescribeRendezvousKey("a") == "'a'");
}

}  // namespace
}  // namespace tfd
