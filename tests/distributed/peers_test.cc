// Peers logging in to a task on loopback whose Gate is a stand-in: it says
// which peer protocol it speaks. One of another protocol (0: a tfd from
// before the handshake, which also knows nothing of the field) is refused
// with FAILED_PRECONDITION naming both protocols and the task, and is not
// asked again, however long the caller would wait; one of this protocol is
// logged in to.
#include "daemon/distributed/peers.h"

#include <capnp/rpc-twoparty.h>
#include <catch2/catch.hpp>
#include <kj/async-io.h>

#include <string>

namespace tfd {
namespace {

const std::string kSelf = "/job:worker/replica:0/task:0";
const std::string kPs = "/job:ps/replica:0/task:0";

// A Gate that lets everyone in and answers with `protocol`.
class StandInGate final : public proto::Gate::Server {
 public:
  StandInGate(uint32_t protocol, int& logins, uint32_t& heard)
      : protocol_(protocol), logins_(logins), heard_(heard) {}

 protected:
  kj::Promise<void> login(LoginContext context) override {
    ++logins_;
    heard_ = context.getParams().getProtocol();
    auto services = context.getResults().initServices();
    services.setTask(kPs);
    services.setProtocol(protocol_);
    return kj::READY_NOW;
  }

 private:
  uint32_t protocol_;
  int& logins_;
  uint32_t& heard_;
};

// The stand-in on a free loopback port, and a Peers of kSelf that reaches it.
struct Fixture {
  explicit Fixture(uint32_t protocol) {
    auto address = io.provider->getNetwork().parseAddress("127.0.0.1", 0).wait(io.waitScope);
    listener = address->listen();
    server = kj::heap<capnp::TwoPartyServer>(kj::heap<StandInGate>(protocol, logins, heard));
    serving = server->listen(*listener).eagerlyEvaluate(nullptr);
    const std::string ps = "127.0.0.1:" + std::to_string(listener->getPort());
    auto cluster = ClusterSpec::FromJson(R"({"ps": [")" + ps + R"("], "worker": ["127.0.0.1:1"]})");
    REQUIRE(cluster.ok());
    peers = kj::heap<Peers>(*io.provider, io.provider->getTimer(), *cluster, kSelf,
                            TaskServices{}, "", nullptr, nullptr);
  }

  // Services(kPs), waiting for the task to start for up to 5 s.
  Status Reach() {
    const kj::TimePoint deadline = io.provider->getTimer().now() + 5 * kj::SECONDS;
    return Settle(peers->Services(kPs, deadline).ignoreResult()).wait(io.waitScope);
  }

  kj::AsyncIoContext io = kj::setupAsyncIo();
  int logins = 0;
  uint32_t heard = 0;
  kj::Own<kj::ConnectionReceiver> listener;
  kj::Own<capnp::TwoPartyServer> server;
  kj::Promise<void> serving = nullptr;
  kj::Own<Peers> peers;
};

TEST_CASE("a task of another peer protocol is refused at login, naming both, and not asked again") {
  for (const uint32_t theirs : {0u, kPeerProtocol + 1}) {
    INFO("protocol " << theirs);
    Fixture f(theirs);
    const Status s = f.Reach();
    INFO(s.ToString());
    CHECK(s.code() == Code::kFailedPrecondition);
    CHECK(s.message().find(kPs + " speaks peer protocol " + std::to_string(theirs)) !=
          std::string::npos);
    CHECK(s.message().find(kSelf + " speaks peer protocol " + std::to_string(kPeerProtocol)) !=
          std::string::npos);
    CHECK(f.logins == 1);  // refused at once, not retried until the deadline
    CHECK(f.heard == kPeerProtocol);
  }
}

TEST_CASE("a task of this peer protocol is logged in to") {
  Fixture f(kPeerProtocol);
  const Status s = f.Reach();
  INFO(s.ToString());
  CHECK(s.ok());
  CHECK(f.logins == 1);
}

}  // namespace
}  // namespace tfd
