// What a logged-in client makes a real tfd hold is counted by its memory
// budget (--memory-budget), and past it the client is refused while the task
// lives: the constants of its sessions' graphs, decoded at createSession
// from a few bytes each (a shape and one value), and the frames it sends
// after login — one larger than --max-message-bytes is refused at its
// header, one that finds no room waits (the connection is read no further)
// and is refused when none comes. The task's resident memory is checked to
// stay near the budget, where before it grew with every session and frame.
#include <catch2/catch.hpp>
#include <capnp/serialize-text.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "daemon/rpc/connection.h"
#include "daemon/rpc/kj_status.h"
#include "tests/integration/child_process.h"
#include "tests/integration/cluster_fixture.h"
#include "tests/integration/log_lines.h"
#include "tests/integration/raw_socket.h"

namespace tfd {
namespace {

using namespace std::chrono_literals;
using testing::Contains;
using testing::LocalCluster;
using testing::RawSocket;
using testing::Le32;
using testing::RssKib;
using testing::WaitForLines;

// A client of its own connection, logged in (the cluster has no token),
// that sends what the client library would not: graphs whose constants are
// one value repeated, and raw bytes after its login.
class RawClient {
 public:
  RawClient(kj::AsyncIoContext& io, const std::string& address) : io_(io) {
    auto stream = io.provider->getNetwork()
                      .parseAddress(address)
                      .then([](kj::Own<kj::NetworkAddress> a) { return a->connect().attach(kj::mv(a)); })
                      .wait(io.waitScope);
    KJ_IF_MAYBE(fd, stream->getFd()) { raw_ = std::make_unique<RawSocket>(::dup(*fd)); }
    REQUIRE(raw_ != nullptr);
    connection_ = RpcConnection::Client(kj::mv(stream));
    auto login =
        connection_->Bootstrap().castAs<proto::Gate>().loginRequest().send().wait(io.waitScope);
    master_ = login.getServices().getMaster();
  }

  // A session of a graph of `consts` Const nodes, each float32[elements]
  // given by one value: a few hundred bytes on the wire.
  StatusOr<proto::Session::Client> CreateSession(int consts, int64_t elements) {
    std::string nodes;
    for (int i = 0; i < consts; ++i) {
      nodes += (i ? ", " : "") + std::string("(name = \"c") + std::to_string(i) +
               "\", op = \"Const\", attrs = [(name = \"value\", value = (tensor = (dtype = "
               "float32, shape = [" + std::to_string(elements) + "], floatVal = [1]))), "
               "(name = \"dtype\", value = (type = float32))])";
    }
    const std::string text = "(nodes = [" + nodes + "])";
    auto request = master_.createSessionRequest();
    capnp::TextCodec codec;
    request.adoptGraph(codec.decode<proto::GraphDef>(
        kj::StringPtr(text.c_str()), capnp::Orphanage::getForMessageContaining(
                                         proto::Master::CreateSessionParams::Builder(request))));
    kj::Maybe<proto::Session::Client> session;
    // Answered once the graph was decoded, or refused.
    Status answer = Settle(request.send().then(
                               [&session](capnp::Response<proto::Master::CreateSessionResults>&& r) {
                                 session = r.getSession();
                               }))
                        .wait(io_.waitScope);
    if (!answer.ok()) return answer;
    KJ_IF_MAYBE(s, session) { return *s; }
    return errors::Internal("createSession answered without a session");
  }

  Status Close(proto::Session::Client& session) {
    return Settle(session.closeRequest().send().ignoreResult()).wait(io_.waitScope);
  }

  RawSocket& raw() { return *raw_; }

 private:
  kj::AsyncIoContext& io_;
  std::unique_ptr<RawSocket> raw_;  // the same connection, for bytes of our own
  kj::Own<RpcConnection> connection_;
  proto::Master::Client master_ = nullptr;
};

TEST_CASE("twelve sessions of repeated constants: past --memory-budget createSession is "
          "RESOURCE_EXHAUSTED, the task lives and holds no more than its budget") {
  // Each session's four constants take 16 MiB decoded: two fit in 40 MiB.
  LocalCluster cluster({{"worker", 1}}, {"--memory-budget", "40M"});
  REQUIRE(cluster.Start("worker", 0).ok());
  const pid_t pid = cluster.Pid("worker", 0);
  const int64_t rss_before = RssKib(pid);
  REQUIRE(rss_before > 0);

  RawClient client(cluster.io(), cluster.Address("worker", 0));
  std::vector<proto::Session::Client> sessions;
  std::vector<Status> refused;
  for (int i = 0; i < 12; ++i) {
    auto session = client.CreateSession(4, 1 << 20);
    if (session.ok()) {
      sessions.push_back(std::move(session).value());
    } else {
      refused.push_back(session.status());
    }
  }
  CHECK(sessions.size() == 2);
  REQUIRE(refused.size() == 10);
  for (const Status& s : refused) {
    INFO(s.ToString());
    CHECK(s.code() == Code::kResourceExhausted);
    CHECK(Contains(s.message(), "attr 'value'"));
    CHECK(Contains(s.message(), "float32[1048576]"));
    CHECK(Contains(s.message(), "of 40 MiB in use (--memory-budget)"));
  }
  const int64_t rss_after = RssKib(pid);
  INFO("VmRSS " << rss_before << " KiB before, " << rss_after << " KiB after");
  CHECK(rss_after - rss_before < 64 * 1024);  // 192 MiB if all twelve were decoded

  // The task serves on, and a closed session's constants leave the budget.
  REQUIRE(client.Close(sessions[0]).ok());
  auto again = client.CreateSession(4, 1 << 20);
  INFO(again.status().ToString());
  CHECK(again.ok());
  auto other = cluster.Connect("worker", 0);
  REQUIRE(other.ok());
  CHECK((*other)->GetStatus(5s).ok());
}

TEST_CASE("frames after login: one over --max-message-bytes is refused at its header, one with "
          "no room in --memory-budget is held back and refused; the task lives") {
  // --max-message-bytes left at its default, 4.3 GiB.
  LocalCluster cluster({{"worker", 1}}, {"--memory-budget", "64M", "--login-timeout", "2"});
  REQUIRE(cluster.Start("worker", 0).ok());
  const pid_t pid = cluster.Pid("worker", 0);
  const int64_t rss_before = RssKib(pid);
  REQUIRE(rss_before > 0);
  const std::string mib(1 << 20, '\0');
  // Sends up to `limit` MiB of a frame's body; how many went.
  auto body = [&](RawSocket& s, int limit) {
    int sent = 0;
    while (sent < limit && s.Send(mib, 10s)) ++sent;
    return sent;
  };

  // Three clients declare 2^31 - 16 words (16 GiB) each.
  for (int i = 0; i < 3; ++i) {
    RawClient client(cluster.io(), cluster.Address("worker", 0));
    REQUIRE(client.raw().Send(Le32(0) + Le32(0x7ffffff0)));
    CHECK(body(client.raw(), 64) < 64);
    CHECK(client.raw().WaitClosed(15s));
  }
  auto too_large = WaitForLines([&] { return cluster.Log("worker", 0); },
                                "(--max-message-bytes)", 3, 10s);
  CHECK(too_large.size() == 3);
  for (const auto& line : too_large) CHECK(Contains(line, "sent a frame of 17179869064 bytes"));

  // Three clients declare 48 MiB each: the first fits and is read; the
  // others wait for room that does not come, unread, and are closed.
  std::vector<std::unique_ptr<RawClient>> clients;
  for (int i = 0; i < 3; ++i) {
    clients.push_back(std::make_unique<RawClient>(cluster.io(), cluster.Address("worker", 0)));
    REQUIRE(clients.back()->raw().Send(Le32(0) + Le32(6 << 20)));
  }
  CHECK(body(clients[0]->raw(), 32) == 32);
  for (int i = 1; i < 3; ++i) {
    CHECK(body(clients[i]->raw(), 32) < 32);
    CHECK(clients[i]->raw().WaitClosed(15s));
  }
  auto no_room = WaitForLines([&] { return cluster.Log("worker", 0); },
                              "which found no room in the task's memory budget for 2 s", 2, 10s);
  CHECK(no_room.size() == 2);
  for (const auto& line : no_room) CHECK(Contains(line, "RESOURCE_EXHAUSTED"));

  const int64_t rss_after = RssKib(pid);
  INFO("VmRSS " << rss_before << " KiB before, " << rss_after << " KiB after");
  CHECK(rss_after - rss_before < 64 * 1024);  // 160 MiB if every byte sent were kept

  // The task serves others meanwhile, and once the first client goes its
  // frame's room is free again.
  auto other = cluster.Connect("worker", 0);
  REQUIRE(other.ok());
  CHECK((*other)->GetStatus(5s).ok());
  clients.clear();
  RawClient later(cluster.io(), cluster.Address("worker", 0));
  REQUIRE(later.raw().Send(Le32(0) + Le32(6 << 20)));
  CHECK(body(later.raw(), 48) == 48);
}

}  // namespace
}  // namespace tfd
