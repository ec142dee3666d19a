// GateService: the bootstrap capability of every accepted connection, and
// nothing but login. With a token configured, a wrong or missing token gets
// UNAUTHENTICATED and is counted against the peer's address; an address with
// too many recent failures is refused before its token is looked at
// (daemon/distributed/login_throttle.h). A successful login hands out the task's Master
// and Worker and tells the connection (LoginState), which then lifts its
// pre-login limits.
//
//   auto state = kj::refcounted<LoginState>("10.0.0.7:4711", "10.0.0.7");
//   state->OnLogin([&] { stream.Lift(); });
//   auto gate = kj::heap<GateService>(env, token, services, throttle, log, kj::addRef(*state));
//
// Thread-safety: a capnp server; event-loop thread only.
#pragma once

#include <kj/function.h>
#include <kj/refcount.h>

#include <string>

#include "daemon/distributed/login_throttle.h"
#include "daemon/distributed/peers.h"
#include "daemon/rpc/rate_limited_log.h"
#include "daemon/distributed/task_env.h"
#include "daemon/distributed/task_metrics.h"
#include "schemas/rpc.capnp.h"

namespace tfd {

// Who is on the other end of one connection and whether it has logged in.
// Shared by the connection and its Gate, which the RPC system may keep a
// moment longer than the connection; the connection calls Detach() when it
// goes.
class LoginState : public kj::Refcounted {
 public:
  LoginState(std::string peer, std::string peer_host)
      : peer_(std::move(peer)), peer_host_(std::move(peer_host)) {}

  const std::string& peer() const { return peer_; }            // "10.0.0.7:4711"
  const std::string& peer_host() const { return peer_host_; }  // "10.0.0.7"
  bool logged_in() const { return logged_in_; }

  // `f` runs once, at the first successful login.
  void OnLogin(kj::Function<void()> f) { on_login_ = kj::mv(f); }
  void Detach() { on_login_ = nullptr; }
  void SetLoggedIn();

 private:
  std::string peer_, peer_host_;
  bool logged_in_ = false;
  kj::Maybe<kj::Function<void()>> on_login_;
};

class GateService final : public CountedServer<proto::Gate> {
 public:
  // `throttle` and `log` belong to the task's server and outlive its connections.
  GateService(TaskEnv& env, std::string token, TaskServices services, LoginThrottle& throttle,
              RateLimitedLog& log, kj::Own<LoginState> state)
      : CountedServer(env.metrics),
        env_(env),
        token_(std::move(token)),
        services_(kj::mv(services)),
        throttle_(throttle),
        log_(log),
        state_(kj::mv(state)) {}

  // Revokes the data-plane ticket this connection's peer was given: pushes
  // are accepted only from peers that are still logged in.
  ~GateService();

 protected:
  kj::Promise<void> login(LoginContext context) override;

 private:
  TaskEnv& env_;
  std::string token_;
  TaskServices services_;
  LoginThrottle& throttle_;
  RateLimitedLog& log_;
  kj::Own<LoginState> state_;
  std::string ticket_;  // given to the peer task that logged in here
};

}  // namespace tfd
