// Status details: what WithTask / WithNode / WithReason record beside the
// message (which reads as before), and the details' wire token: it comes back
// as it went, and anything malformed, truncated or hostile is "no details",
// never a crash.
#include "common/status_details.h"

#include <catch2/catch.hpp>

#include <random>

#include "common/status.h"

namespace tfd {
namespace {

const std::string kPs = "/job:ps/replica:0/task:0";

StatusDetails Full() {
  return {.task = kPs, .node = "w/read", .op = "_Recv", .reason = ErrorReason::kConnectionLost};
}

TEST_CASE("details are recorded beside a message that reads as before") {
  const Status s = errors::Unavailable("boom").WithNode("w/read", "_Recv").WithTask(kPs);
  CHECK(s.ToString() == "UNAVAILABLE: " + kPs + ": node 'w/read' (_Recv): boom");
  CHECK(s.task() == kPs);
  CHECK(s.node() == "w/read");
  CHECK(s.op() == "_Recv");
  CHECK(s.reason() == ErrorReason::kNone);
  CHECK(s.WithReason(ErrorReason::kConnectionLost).reason() == ErrorReason::kConnectionLost);
  CHECK(s.WithContext("while saving").task() == kPs);  // context keeps the details
  CHECK(OkStatus().WithTask(kPs).details().empty());   // OK stays plain OK
}

TEST_CASE("a node wrapping another error is the node that failed, on no task yet") {
  // A partition cancelled by another task's error: its own _Recv failed.
  const Status theirs = errors::Aborted("queue closed").WithNode("dequeue", "QueueDequeue")
                            .WithTask("/job:worker/replica:0/task:1");
  const Status ours = theirs.WithNode("recv", "_Recv");
  CHECK(ours.node() == "recv");
  CHECK(ours.op() == "_Recv");
  CHECK(ours.task().empty());
  CHECK(ours.message() ==
        "node 'recv' (_Recv): /job:worker/replica:0/task:1: node 'dequeue' (QueueDequeue): "
        "queue closed");
}

TEST_CASE("details survive their wire token, whatever bytes they hold") {
  StatusDetails odd{.task = "a;b=3:c", .node = std::string("n\0\n;=", 5), .op = "tfd-details/1/0:"};
  for (const StatusDetails& d : {Full(), StatusDetails{.task = kPs}, odd}) {
    const std::string wire = EncodeStatusDetails(d);
    CAPTURE(wire);
    const ParsedStatusDetails in = ParseStatusDetails(wire + " INTERNAL: x");
    CHECK(in.details == d);
    CHECK(in.consumed == wire.size());
  }
  CHECK(EncodeStatusDetails({}).empty());
}

TEST_CASE("a later version's token is skipped whole, unknown keys and reasons ignored") {
  const ParsedStatusDetails later = ParseStatusDetails("tfd-details/2/7:whatevr INTERNAL: x");
  CHECK(later.details.empty());
  CHECK(later.consumed == std::string("tfd-details/2/7:whatevr").size());
  const std::string body = "color=4:blue;reason=7:NEWNESS;node=1:x;";
  const ParsedStatusDetails keys =
      ParseStatusDetails("tfd-details/1/" + std::to_string(body.size()) + ":" + body);
  CHECK(keys.details == StatusDetails{.node = "x"});
}

TEST_CASE("truncated, corrupted or random tokens are no details, never a crash") {
  const std::string wire = EncodeStatusDetails(Full());
  // Every truncation but the whole is malformed.
  for (size_t n = 0; n < wire.size(); ++n) {
    const ParsedStatusDetails in = ParseStatusDetails(wire.substr(0, n));
    CHECK(in.details.empty());
    CHECK(in.consumed == 0);
  }
  std::mt19937 rng(35);
  for (int i = 0; i < 20000; ++i) {
    std::string s = wire;
    if (i % 2 == 0) {  // a few bytes of a good token changed
      for (int k = 0; k < 1 + i % 3; ++k) s[rng() % s.size()] = static_cast<char>(rng());
    } else {  // the magic, then garbage
      s = "tfd-details/" + std::to_string(rng() % 3);
      for (size_t k = rng() % 40; k > 0; --k) s += "0123456789/:=;tk"[rng() % 16];
    }
    const ParsedStatusDetails in = ParseStatusDetails(s);
    REQUIRE(in.consumed <= s.size());
    if (in.consumed == 0) CHECK(in.details.empty());
  }
  CHECK(ParseStatusDetails("tfd-details/1/99999999999999999999:").consumed == 0);
  CHECK(ParseStatusDetails("tfd-details/1/5:node=").consumed == 0);
  CHECK(ParseStatusDetails("tfd-details/1/12:node=9:abc;").consumed == 0);
}

}  // namespace
}  // namespace tfd
