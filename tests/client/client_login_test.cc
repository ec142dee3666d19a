// Client::Connect against a stand-in Gate on loopback that answers the login
// with the cluster spec a test gives it: a spec is what the client keeps, no
// spec (a tfd older than the field) is none, and a spec that does not parse
// fails the login with INTERNAL naming the task's address, not a client
// that believes its cluster empty (and decides it is the chief).
#include <string>

#include <capnp/rpc-twoparty.h>
#include <catch2/catch.hpp>
#include <kj/async-io.h>

#include "daemon/client/client.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;

// A Gate that lets everyone in as worker 1 and tells them `cluster`.
class StandInGate final : public proto::Gate::Server {
 public:
  explicit StandInGate(std::string cluster) : cluster_(std::move(cluster)) {}

 protected:
  kj::Promise<void> login(LoginContext context) override {
    auto services = context.getResults().initServices();
    services.setTask("/job:worker/replica:0/task:1");
    services.setCluster(cluster_);
    return kj::READY_NOW;
  }

 private:
  std::string cluster_;
};

struct StandIn {
  explicit StandIn(const std::string& cluster) {
    auto address = io.provider->getNetwork().parseAddress("127.0.0.1", 0).wait(io.waitScope);
    listener = address->listen();
    server = kj::heap<capnp::TwoPartyServer>(kj::heap<StandInGate>(cluster));
    serving = server->listen(*listener).eagerlyEvaluate(nullptr);
    target = "127.0.0.1:" + std::to_string(listener->getPort());
  }
  StatusOr<std::unique_ptr<Client>> Connect() { return Client::Connect(io, target, "", 10s); }

  kj::AsyncIoContext io = kj::setupAsyncIo();
  kj::Own<kj::ConnectionReceiver> listener;
  kj::Own<capnp::TwoPartyServer> server;
  kj::Promise<void> serving = nullptr;
  std::string target;
};

TEST_CASE("the cluster spec a task answers the login with is the client's") {
  const std::string spec = R"({"ps": ["127.0.0.1:1"], "worker": ["127.0.0.1:2", "127.0.0.1:3"]})";
  StandIn task(spec);
  auto client = task.Connect();
  INFO(client.status().ToString());
  REQUIRE(client.ok());
  CHECK((*client)->task() == "/job:worker/replica:0/task:1");
  CHECK((*client)->cluster().NumTasks() == 3);
  CHECK((*client)->cluster().ToJson() == ClusterSpec::FromJson(spec)->ToJson());
}

TEST_CASE("a login answered without a cluster spec (an older tfd) leaves it empty") {
  StandIn task("");
  auto client = task.Connect();
  INFO(client.status().ToString());
  REQUIRE(client.ok());
  CHECK((*client)->cluster().NumTasks() == 0);
}

TEST_CASE("a login answered with a cluster spec that does not parse fails with INTERNAL") {
  for (const std::string& bad : {std::string("{\"ps\": ["), std::string("[1, 2]"),
                                 std::string(R"({"ps": ["127.0.0.1:99999"]})"),
                                 std::string(R"({"ps": ["127.0.0.1:1", "127.0.0.1:1"]})")}) {
    INFO("spec " << bad);
    StandIn task(bad);
    auto client = task.Connect();
    INFO(client.status().ToString());
    CHECK(client.status().code() == Code::kInternal);
    CHECK(client.status().message().find("the task at " + task.target +
                                         " logged us in with a cluster spec that does not "
                                         "parse: ") != std::string::npos);
  }
}

}  // namespace
}  // namespace tfd
