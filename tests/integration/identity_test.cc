// With TLS, who a peer is comes from its certificate (URI tfd:task/JOB/N or
// tfd:role/ROLE, daemon/rpc/tls_identity.h), never from what it says: each
// impersonation of the security review is tried here against real tasks —
// logging in as another task, a client registering partitions or holding
// steps, a task registering a partition for another task's steps, a client
// saving or restoring the cluster, a stream opened in another task's name —
// and each is refused with the right code, while every role keeps what it
// is for.
#include <catch2/catch.hpp>

#include "common/graph_io.h"
#include "daemon/distributed/peers.h"
#include "daemon/rpc/connection.h"
#include "daemon/rpc/kj_status.h"
#include "daemon/transport/stream_frames.h"
#include "tests/integration/child_process.h"
#include "tests/integration/cluster_fixture.h"
#include "tests/integration/graph_helpers.h"
#include "tests/integration/log_lines.h"
#include "tests/integration/test_certs.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;
using testing::Certs;
using testing::Contains;
using testing::LocalCluster;
using testing::OneLine;

// A raw login over TLS, as any program holding a certificate could make it.
struct Login {
  kj::Own<RpcConnection> connection;
  proto::Master::Client master = nullptr;
  proto::Worker::Client worker = nullptr;
  bool invited = false;  // a data-plane invitation came with it
};

kj::Promise<kj::Own<kj::AsyncIoStream>> Dial(kj::AsyncIoContext& io, const std::string& address,
                                             const std::shared_ptr<Tls>& tls) {
  return io.provider->getNetwork()
      .parseAddress(address.c_str())
      .then([](kj::Own<kj::NetworkAddress> a) { return a->connect().attach(kj::mv(a)); })
      .then([tls, address](kj::Own<kj::AsyncIoStream> s) {
        return tls->WrapClient(kj::mv(s), address);
      });
}

StatusOr<Login> LoginAs(kj::AsyncIoContext& io, const std::string& address,
                        const std::shared_ptr<Tls>& tls, const std::string& peer) {
  auto login = Dial(io, address, tls).then([peer](kj::Own<kj::AsyncIoStream> stream) {
    auto connection = RpcConnection::Client(kj::mv(stream));
    auto request = connection->Bootstrap().castAs<proto::Gate>().loginRequest();
    request.setPeer(peer);
    request.setProtocol(kPeerProtocol);
    return request.send().then(
        [connection = kj::mv(connection)](capnp::Response<proto::Gate::LoginResults>&& r) mutable {
          auto s = r.getServices();
          return Login{kj::mv(connection), s.getMaster(), s.getWorker(), s.hasDataPlane()};
        });
  });
  auto settled = login.then([](Login l) -> StatusOr<Login> { return l; },
                            [](kj::Exception&& e) -> StatusOr<Login> { return StatusFromKj(e); });
  return settled.exclusiveJoin(io.provider->getTimer().afterDelay(20 * kj::SECONDS).then(
                                   []() -> StatusOr<Login> {
                                     return errors::DeadlineExceeded("no answer to the login");
                                   }))
      .wait(io.waitScope);
}

template <typename T>
Status Answer(kj::AsyncIoContext& io, kj::Promise<T> call) {
  auto settled = call.then([](T) { return OkStatus(); },
                           [](kj::Exception&& e) { return StatusFromKj(e); });
  return settled.exclusiveJoin(io.provider->getTimer().afterDelay(20 * kj::SECONDS).then([]() {
    return errors::DeadlineExceeded("no answer");
  })).wait(io.waitScope);
}

// A cluster of ps:0, worker:0 and worker:1, each with its own certificate
// and a checkpoint directory (so saves can really happen).
struct TlsCluster {
  Certs certs;
  LocalCluster cluster{{{"ps", 1}, {"worker", 2}}, {"--checkpoint-dir", certs.dir.path() + "/ckpt"}};
  TlsCluster() {
    REQUIRE(cluster.Spawn("ps", 0, certs.Flags("ps-0")).ok());
    REQUIRE(cluster.Spawn("worker", 0, certs.Flags("worker-0")).ok());
    REQUIRE(cluster.Spawn("worker", 1, certs.Flags("worker-1")).ok());
    auto up = Client::Connect(cluster.io(), cluster.Address("worker", 0), "", 30s,
                              certs.Load("client"));
    INFO(up.status().ToString());
    REQUIRE(up.ok());
    REQUIRE((*up)->WaitCluster(30s).ok());
  }
  std::string Ps() const { return cluster.Address("ps", 0); }
};

const std::string kPs = "/job:ps/replica:0/task:0";
const std::string kWorker0 = "/job:worker/replica:0/task:0";
const std::string kWorker1 = "/job:worker/replica:0/task:1";

TEST_CASE("a certificate logs in only as what it names") {
  TlsCluster t;
  auto& io = t.cluster.io();
  struct Case {
    const char* cert;
    std::string as;
    std::string says;
  };
  for (const Case& c : std::vector<Case>{Case{"client", kPs, "names role client"},
                        Case{"operator", kWorker0, "names role operator"},
                        Case{"worker-1", kPs, "names the task " + kWorker1},
                        Case{"worker-1", kWorker0, "names the task " + kWorker1},
                        Case{"anonymous", "", "carries no tfd identity"},
                        Case{"anonymous", kPs, "carries no tfd identity"}}) {
    INFO(c.cert << " as '" << c.as << "'");
    auto login = LoginAs(io, t.Ps(), t.certs.Load(c.cert), c.as);
    CHECK(login.status().code() == Code::kUnauthenticated);
    CHECK(Contains(login.status().message(), c.says));
  }
  CHECK(!testing::LinesWith(t.cluster.Log("ps", 0), "impersonation").empty());
  // What each certificate names, it gets: a task its data-plane invitation.
  auto worker = LoginAs(io, t.Ps(), t.certs.Load("worker-1"), kWorker1);
  INFO(worker.status().ToString());
  REQUIRE(worker.ok());
  CHECK(worker->invited);
  auto client = LoginAs(io, t.Ps(), t.certs.Load("client"), "");
  REQUIRE(client.ok());
  CHECK_FALSE(client->invited);
}

TEST_CASE("each role calls only what it may") {
  TlsCluster t;
  auto& io = t.cluster.io();
  auto login = [&](const char* cert, const std::string& as = "") {
    auto l = LoginAs(io, t.Ps(), t.certs.Load(cert), as);
    INFO(cert << ": " << l.status().ToString());
    REQUIRE(l.ok());
    return std::move(l).value();
  };
  auto hold = [&](Login& l) {
    auto r = l.worker.holdStepsRequest();
    r.setDrainMs(100);
    r.setHoldMs(1000);
    return Answer(io, r.send());
  };
  auto save_task = [&](Login& l) { return Answer(io, l.worker.saveCheckpointRequest().send()); };
  auto finish_task = [&](Login& l) {
    auto r = l.worker.finishCheckpointRequest();
    r.setStep(1);
    r.setAction(proto::CheckpointAction::DISCARD);
    return Answer(io, r.send());
  };
  auto save_cluster = [&](Login& l) {
    auto r = l.master.saveCheckpointRequest();
    r.setStep(1);
    r.setHasStep(true);
    r.setTimeoutMs(20000);
    return Answer(io, r.send());
  };
  auto register_for = [&](Login& l, const std::string& master) {
    auto r = l.worker.registerGraphRequest();
    r.setMaster(master);
    r.setSession("s");
    r.initGraph();
    return Answer(io, r.send());
  };

  Login client = login("client");
  for (const auto& [what, s] : {std::pair{"registerGraph", register_for(client, "")},
                                std::pair{"holdSteps", hold(client)},
                                std::pair{"Worker.saveCheckpoint", save_task(client)},
                                std::pair{"Worker.finishCheckpoint", finish_task(client)},
                                std::pair{"Master.saveCheckpoint", save_cluster(client)}}) {
    INFO(what << ": " << s.ToString());
    CHECK(s.code() == Code::kPermissionDenied);
    CHECK(Contains(s.message(), "role client"));
  }
  // What a client is for: status, and its own sessions and runs.
  CHECK(Answer(io, client.worker.statusRequest().send()).ok());
  auto session = Client::Connect(io, t.cluster.Address("worker", 0), "", 20s, t.certs.Load("client"));
  REQUIRE(session.ok());
  GraphDef g;
  g.nodes = {testing::Const("x", 2.0f, "/job:ps/task:0"),
             testing::Node("y", "Add", {"x", "x"}, "/job:worker/task:0")};
  REQUIRE((*session)->CreateSession(g).ok());
  auto out = (*session)->Run({}, {"y"}, {}, {});
  INFO(out.status().ToString());
  REQUIRE(out.ok());
  CHECK(out->fetches[0].scalar<float>() == 4.0f);

  // The chief saves the cluster, but holds nothing itself.
  Login chief = login("chief");
  const Status chief_save = save_cluster(chief);
  INFO(chief_save.ToString());
  CHECK(chief_save.ok());
  CHECK(hold(chief).code() == Code::kPermissionDenied);
  // The operator holds steps too.
  Login op = login("operator");
  CHECK(hold(op).ok());
  CHECK(save_cluster(op).ok());

  // A task registers partitions for its own steps only.
  Login worker = login("worker-1", kWorker1);
  const Status for_other = register_for(worker, kWorker0);
  CHECK(for_other.code() == Code::kPermissionDenied);
  CHECK(Contains(for_other.message(), kWorker0));
  CHECK(register_for(worker, kWorker1).code() != Code::kPermissionDenied);
  CHECK(save_cluster(worker).code() == Code::kPermissionDenied);
}

TEST_CASE("a data-plane stream must come from the task its certificate names") {
  TlsCluster t;
  auto& io = t.cluster.io();
  auto open = [&](const char* cert, const std::string& as) {
    auto opened = Dial(io, t.Ps(), t.certs.Load(cert)).then([as](kj::Own<kj::AsyncIoStream> s) {
      auto& stream = *s;
      return stream::SendHello(stream, stream::Hello{.task = as})
          .then([&stream]() { return stream::ReceiveWelcome(stream); })
          .attach(kj::mv(s));
    });
    return Answer(io, kj::mv(opened));
  };
  const Status client = open("client", kWorker1);
  CHECK(client.code() == Code::kUnauthenticated);
  CHECK(Contains(client.message(), "role client"));
  const Status other = open("worker-1", kPs);
  CHECK(other.code() == Code::kUnauthenticated);
  CHECK(Contains(other.message(), kWorker1));
  const Status anonymous = open("anonymous", kWorker0);
  CHECK(anonymous.code() == Code::kUnauthenticated);
  // The task itself is welcomed, twice in a row.
  CHECK(open("worker-1", kWorker1).ok());
  CHECK(open("worker-1", kWorker1).ok());
}

TEST_CASE("tfd refuses to start with a certificate that names another task, or none") {
  Certs certs;
  for (const auto& [cert, says] : {std::pair{"worker-0", "names the task " + kWorker0},
                                   std::pair{"client", std::string("names role client")},
                                   std::pair{"anonymous", std::string("no tfd identity")}}) {
    INFO(cert);
    std::vector<std::string> argv = {testing::TfdBinary(), "--cluster",
                                     R"({"ps": ["127.0.0.1:1"]})", "--job", "ps", "--task", "0"};
    const auto flags = certs.Flags(cert);
    argv.insert(argv.end(), flags.begin(), flags.end());
    auto run = testing::RunProcess(argv, 30s);
    REQUIRE(run.ok());
    INFO("stderr: " << OneLine(run->err));
    CHECK(run->exit_status == 2);
    CHECK(Contains(run->err, "INVALID_ARGUMENT"));
    CHECK(Contains(run->err, says));
    CHECK(Contains(run->err, "tfd:task/ps/0"));
  }
}

}  // namespace
}  // namespace tfd
