// Authenticator: the one place a task decides whether a credential gets in
// — a login through the Gate (daemon/distributed/gate_service.h) or the
// hello of a data-plane stream (daemon/transport/stream_frames.h) — and who
// the caller then is.
//
// With an auth token configured, the token presented must match (compared
// in constant time). The right one is answered at once, whatever others
// have tried; a wrong one is refused with UNAUTHENTICATED saying which
// mistake it was (no token, a wrong one), logged (rate-limited) with the
// peer's address, and answered only when the task's LoginThrottle lets it
// go.
//
// With TLS the certificate says who the caller is (daemon/rpc/tls_identity.h):
// a task's certificate may log in as that task only, a client's carries its
// role, and a certificate without a tfd identity is refused. The Caller
// then holds that role's rights only (daemon/distributed/permissions.h).
// Without TLS the caller is what it says, with every right.
//
//   Authenticator auth(env.task, token, /*tls=*/true, throttle, log);
//   auth.Check({.token = t, .task = claimed, .peer = "10.0.0.7:4711", .host = "10.0.0.7",
//               .tls = identity})
//       .then([](StatusOr<Caller> caller) { ... });
//
// Thread-safety: event-loop thread only.
#pragma once

#include <kj/async.h>

#include <string>

#include "common/status.h"
#include "daemon/distributed/login_throttle.h"
#include "daemon/distributed/permissions.h"
#include "daemon/rpc/rate_limited_log.h"
#include "daemon/rpc/tls_identity.h"

namespace tfd {

// What one login (or stream hello) presents.
struct Credentials {
  std::string token;
  std::string task;  // the task it says it is ("/job:J/replica:0/task:T"); empty: a client
  std::string peer;  // "10.0.0.7:4711", for messages
  std::string host;  // "10.0.0.7": the throttle's key
  TlsIdentity tls;   // what the client's certificate says, under TLS
};

class Authenticator {
 public:
  // `self` names this task in errors; an empty `token` lets every caller in
  // (as far as the token goes); `tls`: callers are who their certificates say.
  Authenticator(std::string self, std::string token, bool tls, LoginThrottle& throttle,
                RateLimitedLog& log);

  // The caller, or UNAUTHENTICATED (after whatever wait the throttle asks).
  // A caller that gives up drops the promise, and its place in the throttle.
  kj::Promise<StatusOr<Caller>> Check(const Credentials& credentials);

 private:
  // Who a caller whose token passed is, by its certificate.
  StatusOr<Caller> Identify(const Credentials& c) const;

  const std::string self_;
  const std::string token_;
  const bool tls_;
  LoginThrottle& throttle_;
  RateLimitedLog& log_;
};

// Takes as long for any `given`, whatever its length and wherever it differs
// from `expected` (the secret).
bool ConstantTimeEqual(const std::string& given, const std::string& expected);

}  // namespace tfd
