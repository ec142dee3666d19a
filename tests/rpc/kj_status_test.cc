// Status -> kj::Exception -> Status keeps the code, the message and the
// details, for every code, whether the exception was raised here or arrives
// from a peer over a real Cap'n Proto connection; a description of any shape
// comes back as some error, never a crash.
#include "daemon/rpc/kj_status.h"

#include <capnp/rpc-twoparty.h>
#include <catch2/catch.hpp>
#include <kj/async-io.h>

#include <random>

#include "schemas/rpc.capnp.h"

namespace tfd {
namespace {

TEST_CASE("every code survives the trip through a kj::Exception") {
  for (int i = 1; i < kNumCodes; ++i) {
    const Status s(static_cast<Code>(i), "node 'x' (OneHot): something");
    CAPTURE(s.ToString());
    const kj::Exception e = KjFromStatus(s);
    CHECK(StatusFromKj(e) == s);
    // What a peer's exception looks like on this side of the connection.
    const kj::Exception remote(e.getType(), __FILE__, __LINE__,
                               kj::str("remote exception: ", e.getDescription()));
    CHECK(StatusFromKj(remote) == s);
  }
}

TEST_CASE("an exception without a code is INTERNAL, a lost connection UNAVAILABLE") {
  CHECK(StatusFromKj(kj::Exception(kj::Exception::Type::FAILED, __FILE__, __LINE__,
                                   kj::str("boom")))
            .code() == Code::kInternal);
  CHECK(StatusFromKj(kj::Exception(kj::Exception::Type::DISCONNECTED, __FILE__, __LINE__,
                                   kj::str("peer gone")))
            .code() == Code::kUnavailable);
}

const Status kDetailed = errors::DeadlineExceeded("nothing came")
                             .WithNode("w/recv", "_Recv")
                             .WithTask("/job:worker/replica:0/task:1")
                             .WithReason(ErrorReason::kConnectionLost);

TEST_CASE("details survive the trip through a kj::Exception, here and from a peer") {
  const kj::Exception e = KjFromStatus(kDetailed);
  const Status here = StatusFromKj(e);
  CHECK(here == kDetailed);
  CHECK(here.details() == kDetailed.details());
  const kj::Exception remote(e.getType(), __FILE__, __LINE__,
                             kj::str("remote exception: ", e.getDescription()));
  CHECK(StatusFromKj(remote) == kDetailed);
}

TEST_CASE("a lost connection is UNAVAILABLE with the reason kConnectionLost") {
  const Status lost = StatusFromKj(
      kj::Exception(kj::Exception::Type::DISCONNECTED, __FILE__, __LINE__, kj::str("EOF")));
  CHECK(lost.reason() == ErrorReason::kConnectionLost);
  CHECK(lost.message().find("EOF") != std::string::npos);
  // An UNAVAILABLE a peer wrote itself is not a lost connection.
  CHECK(StatusFromKj(KjFromStatus(errors::Unavailable("draining"))).reason() == ErrorReason::kNone);
}

// A Gate whose login fails with `error`.
class FailingGate final : public proto::Gate::Server {
 public:
  explicit FailingGate(Status error) : error_(std::move(error)) {}

 protected:
  kj::Promise<void> login(LoginContext) override { return KjFromStatus(error_); }

 private:
  Status error_;
};

TEST_CASE("details survive a real RPC from a peer") {
  auto io = kj::setupAsyncIo();
  auto pipe = kj::newTwoWayPipe();
  capnp::TwoPartyClient server(*pipe.ends[0], kj::heap<FailingGate>(kDetailed),
                               capnp::rpc::twoparty::Side::SERVER);
  capnp::TwoPartyClient client(*pipe.ends[1]);
  auto gate = client.bootstrap().castAs<proto::Gate>();
  const Status got = Settle(gate.loginRequest().send().ignoreResult()).wait(io.waitScope);
  INFO(got.ToString());
  CHECK(got == kDetailed);
}

TEST_CASE("hostile descriptions come back as some error, never a crash") {
  const std::string good(KjFromStatus(kDetailed).getDescription().cStr());
  std::vector<std::string> inputs = {"", " ", "tfd-details/", "tfd-details/1/3:abc OK: fine",
                                     "tfd-details/1/0: OK: fine", "tfd-details/1/0:INTERNAL: x",
                                     "remote exception: tfd-details/9/2:ab"};
  for (size_t n = 0; n <= good.size(); ++n) inputs.push_back(good.substr(0, n));
  std::mt19937 rng(35);
  for (int i = 0; i < 5000; ++i) {
    std::string s = good;
    for (int k = 0; k < 1 + i % 4; ++k) s[rng() % s.size()] = static_cast<char>(rng() % 255 + 1);
    inputs.push_back(s);
  }
  for (const std::string& d : inputs) {
    for (auto type : {kj::Exception::Type::FAILED, kj::Exception::Type::DISCONNECTED}) {
      const Status s = StatusFromKj(kj::Exception(type, __FILE__, __LINE__, kj::str(d.c_str())));
      REQUIRE(!s.ok());  // an error all the same, whatever it says
    }
  }
  // A token without the space before the code is not ours: INTERNAL, as given.
  const Status glued = StatusFromKj(kj::Exception(
      kj::Exception::Type::FAILED, __FILE__, __LINE__, kj::str("tfd-details/1/0:INTERNAL: x")));
  CHECK(glued.code() == Code::kInternal);
  CHECK(glued.details().empty());
}

}  // namespace
}  // namespace tfd
