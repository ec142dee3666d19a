// GateService: the bootstrap capability of every accepted connection, and
// nothing but login. The credential is judged by the task's Authenticator
// (daemon/distributed/authenticator.h): the right one is answered at once,
// whatever others have tried; a wrong one only once the throttle lets its
// answer go. A successful login hands out the task's Master and Worker
// (guarded for a restricted role), a data-plane invitation to a peer task,
// and tells the connection (LoginState), which then lifts its pre-login
// limits. A task that speaks another peer protocol than this one
// (kPeerProtocol, daemon/distributed/peers.h) is refused with
// FAILED_PRECONDITION naming both protocols and the task.
//
// A connection has one login in flight: a login called while the previous
// one on the same connection is still being answered waits behind it, so
// pipelining calls on one connection does not multiply guesses. Logins are
// cancellable: a connection that goes drops its waiting answers.
//
//   auto state = kj::refcounted<LoginState>("10.0.0.7:4711", "10.0.0.7");
//   state->OnLogin([&] { stream.Lift(); });
//   auto gate = kj::heap<GateService>(env, services, servers, auth, kj::addRef(*state));
//
// Thread-safety: a capnp server; event-loop thread only.
#pragma once

#include <kj/function.h>
#include <kj/refcount.h>

#include <string>

#include "daemon/distributed/authenticator.h"
#include "daemon/distributed/peers.h"
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
  // Who the peer's TLS certificate says it is (kNone without TLS).
  const TlsIdentity& tls() const { return tls_; }
  void SetTls(TlsIdentity id) { tls_ = std::move(id); }

  // `f` runs once, at the first successful login.
  void OnLogin(kj::Function<void()> f) { on_login_ = kj::mv(f); }
  // Called as the connection goes: a login still queued on it must then
  // leave the server's throttle and log alone, which may be going too.
  void Detach() {
    on_login_ = nullptr;
    detached_ = true;
  }
  bool detached() const { return detached_; }
  void SetLoggedIn();

 private:
  std::string peer_, peer_host_;
  TlsIdentity tls_;
  bool logged_in_ = false;
  bool detached_ = false;
  kj::Maybe<kj::Function<void()>> on_login_;
};

class GateService final : public CountedServer<proto::Gate> {
 public:
  // The objects behind `services`' capabilities, which a login with a
  // restricted role gets guarded (daemon/distributed/permissions.h).
  struct Servers {
    capnp::Capability::Server* master = nullptr;
    capnp::Capability::Server* worker = nullptr;
  };
  // `auth` belongs to the task's server and outlives its connections
  // (LoginState::detached() says when one has gone).
  GateService(TaskEnv& env, TaskServices services, Servers servers, Authenticator& auth,
              kj::Own<LoginState> state)
      : CountedServer(env.metrics),
        env_(env),
        services_(kj::mv(services)),
        servers_(servers),
        auth_(auth),
        state_(kj::mv(state)) {}

  // Revokes the data-plane ticket this connection's peer was given: pushes
  // are accepted only from peers that are still logged in.
  ~GateService();

 protected:
  kj::Promise<void> login(LoginContext context) override;

 private:
  // The login proper, once the previous one on this connection has been answered.
  kj::Promise<void> Login(LoginContext context);
  // Lets `caller` in and answers with the services; FAILED_PRECONDITION,
  // leaving it out, for a task of another peer protocol (kPeerProtocol).
  Status Admit(LoginContext& context, const Caller& caller);

  TaskEnv& env_;
  TaskServices services_;
  Servers servers_;
  Authenticator& auth_;
  kj::Maybe<Caller> caller_;  // who logged in on this connection
  kj::Own<LoginState> state_;
  std::string ticket_;  // given to the peer task that logged in here
  kj::Promise<void> previous_login_ = kj::READY_NOW;  // resolves once it has been answered
};

}  // namespace tfd
