#include "daemon/distributed/gate_service.h"

#include <fmt/format.h>

#include "daemon/rpc/kj_status.h"
#include "daemon/transport/data_plane.h"

namespace tfd {
namespace {

// Takes as long for every token of the right length, wherever it differs.
bool ConstantTimeEqual(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace

void LoginState::SetLoggedIn() {
  if (logged_in_) return;
  logged_in_ = true;
  KJ_IF_MAYBE(f, on_login_) { (*f)(); }
}

kj::Promise<void> GateService::login(LoginContext context) {
  if (!token_.empty() && !state_->logged_in()) {
    const auto now = LoginThrottle::Clock::now();
    const std::string& host = state_->peer_host();
    if (auto wait = throttle_.Blocked(host, now)) {
      // Refused without comparing: a guesser learns nothing, and pays nothing here.
      const int64_t seconds = (wait->count() + 999) / 1000;
      log_.Warn("failed login", fmt::format("refused a login from {}: too many failed logins, "
                                            "retry in {} s", state_->peer(), seconds));
      return KjFromStatus(errors::Unauthenticated(env_.task, ": too many failed logins from ",
                                                  host, ", retry in ", seconds, " s"));
    }
    auto token = context.getParams().getToken();
    const std::string given(reinterpret_cast<const char*>(token.begin()), token.size());
    if (!ConstantTimeEqual(given, token_)) {
      throttle_.Failed(host, now);
      // Say which: a client run without its token file is the common mistake.
      log_.Warn("failed login", fmt::format("refused a login from {} {}", state_->peer(),
                                            given.empty() ? "without a token" : "with a wrong token"));
      if (given.empty()) {
        return KjFromStatus(errors::Unauthenticated(
            env_.task, " requires an auth token and none was given (--token-file or "
            "TFD_AUTH_TOKEN_FILE)"));
      }
      return KjFromStatus(errors::Unauthenticated("wrong token for ", env_.task));
    }
  }
  state_->SetLoggedIn();
  auto services = context.getResults().initServices();
  services.setMaster(services_.master);
  services.setWorker(services_.worker);
  services.setTask(env_.task);
  services.setCluster(env_.cluster.ToJson());
  services.setIncarnation(env_.incarnation);
  const std::string peer = context.getParams().getPeer();
  if (!peer.empty() && env_.data_plane != nullptr) {
    if (!ticket_.empty()) env_.data_plane->Revoke(ticket_);  // a second login
    // Traffic is counted per task named here (DataPlane::traffic, on
    // /metrics): a name that is no task of the cluster is counted as
    // "unknown", so no caller can grow the table.
    const bool in_cluster = env_.cluster.HasTask(peer);
    auto invitation = env_.data_plane->Invite(in_cluster ? peer : "unknown", state_->peer() +
                                              (in_cluster ? "" : ", calling itself " + peer));
    ticket_ = invitation.ticket;
    auto out = services.initDataPlane();
    auto bytes = [](const std::string& s) {
      return kj::arrayPtr(reinterpret_cast<const capnp::byte*>(s.data()), s.size());
    };
    out.setAddress(bytes(invitation.address));
    out.setTicket(bytes(invitation.ticket));
    out.setHost(invitation.host);
  }
  return kj::READY_NOW;
}

GateService::~GateService() {
  if (!ticket_.empty() && env_.data_plane != nullptr) env_.data_plane->Revoke(ticket_);
}

}  // namespace tfd
