// GateService with a token, on a timer the test moves: the right token gets
// in at once however many wrong ones from its address are still waiting for
// their answers, which are UNAUTHENTICATED with the usual messages; logins
// called together on one connection are answered one after another; a task
// of another peer protocol is refused, naming both protocols and the task.
#include "daemon/distributed/gate_service.h"

#include <catch2/catch.hpp>
#include <kj/async.h>
#include <kj/timer.h>

#include <string>
#include <vector>

#include "daemon/rpc/kj_status.h"

namespace tfd {
namespace {

const std::string kTask = "/job:worker/replica:0/task:0";
const std::string kRight = "9f86d081884c7d659a2feaa0c55ad015";

struct Gates {
  kj::EventLoop loop;
  kj::WaitScope ws{loop};
  kj::TimerImpl timer{kj::origin<kj::TimePoint>()};
  TaskEnv env;
  RateLimitedLog log{nullptr, timer};
  LoginThrottle throttle;
  Authenticator auth{kTask, kRight, /*tls=*/false, throttle, log};
  std::vector<kj::Own<LoginState>> states;

  explicit Gates(LoginThrottle::Options options) : throttle(timer, options) { env.task = kTask; }

  // The Gate of a new connection from `host`.
  proto::Gate::Client Connect(const std::string& host) {
    auto state = kj::refcounted<LoginState>(host + ":4711", host);
    states.push_back(kj::addRef(*state));
    return kj::heap<GateService>(env, TaskServices{}, GateService::Servers{}, auth, kj::mv(state));
  }

  // A login with `token`; as the task `peer` speaking `protocol`, unless
  // `peer` is empty (a client).
  capnp::RemotePromise<proto::Gate::LoginResults> Login(proto::Gate::Client& gate,
                                                        const std::string& token,
                                                        const std::string& peer = "",
                                                        uint32_t protocol = 0) {
    auto request = gate.loginRequest();
    request.setToken(
        kj::arrayPtr(reinterpret_cast<const capnp::byte*>(token.data()), token.size()));
    request.setPeer(peer);
    request.setProtocol(protocol);
    return request.send();
  }

  // Moves the clock on by `d`, stopping at each timer on the way (as a
  // real event loop would see them) and running what became ready.
  void Advance(kj::Duration d) {
    const kj::TimePoint target = timer.now() + d;
    for (;;) {
      ws.poll();
      KJ_IF_MAYBE(next, timer.nextEvent()) {
        if (*next <= target) {
          timer.advanceTo(kj::max(*next, timer.now()));
          continue;
        }
      }
      break;
    }
    timer.advanceTo(target);
    ws.poll();
  }

  // The status a resolved login came back with.
  template <typename P>
  Status Outcome(P& login) {
    REQUIRE(login.poll(ws));
    Status status;
    KJ_IF_MAYBE(e, kj::runCatchingExceptions([&] { login.wait(ws); })) {
      status = StatusFromKj(*e);
    }
    return status;
  }
};

TEST_CASE("the right token gets in at once while wrong ones from its address wait for their "
          "answers") {
  // One failed answer a second in all: ten wrong logins take ten seconds.
  Gates g({.rate = 1});
  std::vector<proto::Gate::Client> strangers;
  std::vector<capnp::RemotePromise<proto::Gate::LoginResults>> wrong;
  for (int i = 0; i < 10; ++i) {
    strangers.push_back(g.Connect("127.0.0.1"));
    wrong.push_back(g.Login(strangers.back(), i == 0 ? "" : "guess" + std::to_string(i)));
  }
  g.ws.poll();
  int waiting = 0;
  for (auto& w : wrong) waiting += w.poll(g.ws) ? 0 : 1;
  CHECK(waiting == 9);  // the first took the one slot there was

  // A peer task on the same address, with the right token: in, without the
  // clock moving at all.
  auto peer = g.Connect("127.0.0.1");
  auto in = g.Login(peer, kRight);
  REQUIRE(in.poll(g.ws));
  auto services = in.wait(g.ws);
  CHECK(services.getServices().getTask() == kTask);
  CHECK(g.states.back()->logged_in());

  // The wrong ones are refused as before, one a second.
  g.Advance(10 * kj::SECONDS);
  for (size_t i = 0; i < wrong.size(); ++i) {
    INFO("login " << i);
    const Status s = g.Outcome(wrong[i]);
    CHECK(s.code() == Code::kUnauthenticated);
    CHECK(s.message() == (i == 0 ? kTask + " requires an auth token and none was given "
                                           "(--token-file or TFD_AUTH_TOKEN_FILE)"
                                 : "wrong token for " + kTask));
    CHECK_FALSE(g.states[i]->logged_in());
  }
}

TEST_CASE("logins called together on one connection are answered one after another") {
  // Every failure waits 100 ms; none waits for a global pace.
  Gates g({.free_failures = 0,
           .first_backoff = 100 * kj::MILLISECONDS,
           .max_backoff = 100 * kj::MILLISECONDS,
           .rate = 0});
  auto gate = g.Connect("10.0.0.7");
  std::vector<capnp::RemotePromise<proto::Gate::LoginResults>> wrong;
  for (int i = 0; i < 3; ++i) wrong.push_back(g.Login(gate, "guess" + std::to_string(i)));
  auto right = g.Login(gate, kRight);  // behind them on the same connection
  g.ws.poll();
  for (int answered = 1; answered <= 3; ++answered) {
    INFO("after " << answered << " x 100 ms");
    g.Advance(100 * kj::MILLISECONDS);
    for (int i = 0; i < 3; ++i) CHECK(wrong[i].poll(g.ws) == (i < answered));
    CHECK(right.poll(g.ws) == (answered == 3));
  }
  CHECK(g.Outcome(wrong[2]).code() == Code::kUnauthenticated);
  CHECK(g.Outcome(right).ok());
  CHECK(g.states.back()->logged_in());
}

TEST_CASE("a task of another peer protocol is refused at login, naming both and the task") {
  const std::string peer = "/job:ps/replica:0/task:0";
  Gates g({});
  // A tfd from before the handshake sends no protocol (0); a newer one its own.
  for (const uint32_t theirs : {0u, kPeerProtocol + 1}) {
    INFO("protocol " << theirs);
    auto gate = g.Connect("10.0.0.7");
    auto refused = g.Login(gate, kRight, peer, theirs);
    const Status s = g.Outcome(refused);
    CHECK(s.code() == Code::kFailedPrecondition);
    CHECK(s.message().find(peer + " speaks peer protocol " + std::to_string(theirs)) !=
          std::string::npos);
    CHECK(s.message().find(kTask + " speaks peer protocol " + std::to_string(kPeerProtocol)) !=
          std::string::npos);
    CHECK_FALSE(g.states.back()->logged_in());
  }
  // The same task speaking this protocol is let in, and so is a client,
  // which speaks none.
  auto gate = g.Connect("10.0.0.7");
  auto in = g.Login(gate, kRight, peer, kPeerProtocol);
  REQUIRE(in.poll(g.ws));
  CHECK(in.wait(g.ws).getServices().getProtocol() == kPeerProtocol);
  CHECK(g.states.back()->logged_in());
  auto client_gate = g.Connect("10.0.0.8");
  auto client = g.Login(client_gate, kRight);
  CHECK(g.Outcome(client).ok());
}

}  // namespace
}  // namespace tfd
