#include "daemon/distributed/authenticator.h"

#include <fmt/format.h>

namespace tfd {

bool ConstantTimeEqual(const std::string& given, const std::string& expected) {
  // Every byte of `expected` is looked at whatever was given, so the time
  // taken says nothing of where a guess differs, nor of the token's length.
  unsigned char diff = given.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < expected.size(); ++i) {
    const char g = i < given.size() ? given[i] : 0;
    diff |= static_cast<unsigned char>(g ^ expected[i]);
  }
  return diff == 0;
}

Authenticator::Authenticator(std::string self, std::string token, bool tls,
                             LoginThrottle& throttle, RateLimitedLog& log)
    : self_(std::move(self)), token_(std::move(token)), tls_(tls), throttle_(throttle), log_(log) {}

StatusOr<Caller> Authenticator::Identify(const Credentials& c) const {
  if (!tls_) return Caller{c.task, TlsIdentity::Kind::kNone, /*unrestricted=*/true};
  using Kind = TlsIdentity::Kind;
  const TlsIdentity& id = c.tls;
  if (id.kind == Kind::kNone) {
    return errors::Unauthenticated(
        "the certificate of ", c.peer, " (", id.name, ") carries no tfd identity: ", self_,
        " needs a URI subjectAltName tfd:task/JOB/N or tfd:role/ROLE (docs/operations.md, TLS)");
  }
  if (!c.task.empty() && (id.kind != Kind::kTask || id.task != c.task)) {
    log_.Warn("impersonation", fmt::format("refused a login from {} as {}, an impersonation: its certificate names {}",
                                           c.peer, c.task, id.Describe()));
    return errors::Unauthenticated("a login as ", c.task, " with a certificate that names ",
                                   id.Describe(), ": ", self_,
                                   " takes who a peer is from its certificate");
  }
  return Caller{id.kind == Kind::kTask ? id.task : "", id.kind, /*unrestricted=*/false};
}

kj::Promise<StatusOr<Caller>> Authenticator::Check(const Credentials& c) {
  // The right token is answered at once, whatever others have tried.
  if (token_.empty() || ConstantTimeEqual(c.token, token_)) return Identify(c);
  // Say which: a client run without its token file is the common mistake.
  log_.Warn("failed login", fmt::format("refused a login from {} {}", c.peer,
                                        c.token.empty() ? "without a token" : "with a wrong token"));
  Status refusal =
      c.token.empty()
          ? errors::Unauthenticated(self_, " requires an auth token and none was given "
                                    "(--token-file or TFD_AUTH_TOKEN_FILE)")
          : errors::Unauthenticated("wrong token for ", self_);
  // The answer goes when the throttle says (daemon/distributed/login_throttle.h).
  return throttle_.Failed(c.host).then(
      [refusal = std::move(refusal)]() -> StatusOr<Caller> { return refusal; });
}

}  // namespace tfd
