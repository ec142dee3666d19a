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
  // Cancellable, so a guesser that hangs up does not leave its answer
  // waiting in the throttle's queue (capnp keeps running a call otherwise).
  context.allowCancellation();
  // One login at a time per connection: this one starts once the previous
  // has been answered, or cancelled.
  auto answered = kj::newPromiseAndFulfiller<void>();
  auto turn = kj::mv(previous_login_);
  previous_login_ = kj::mv(answered.promise);
  auto done = kj::defer([fulfiller = kj::mv(answered.fulfiller)]() mutable {
    fulfiller->fulfill();
  });
  return turn.then([this, context]() mutable { return Login(context); }).attach(kj::mv(done));
}

kj::Promise<void> GateService::Login(LoginContext context) {
  if (state_->detached()) {
    return KJ_EXCEPTION(DISCONNECTED, "the connection closed before its login was looked at");
  }
  if (!token_.empty() && !state_->logged_in()) {
    auto token = context.getParams().getToken();
    const std::string given(reinterpret_cast<const char*>(token.begin()), token.size());
    if (!ConstantTimeEqual(given, token_)) return Refuse(given.empty());
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

kj::Promise<void> GateService::Refuse(bool none) {
  // Say which: a client run without its token file is the common mistake.
  log_.Warn("failed login", fmt::format("refused a login from {} {}", state_->peer(),
                                        none ? "without a token" : "with a wrong token"));
  kj::Exception refusal =
      none ? KjFromStatus(errors::Unauthenticated(
                 env_.task, " requires an auth token and none was given (--token-file or "
                 "TFD_AUTH_TOKEN_FILE)"))
           : KjFromStatus(errors::Unauthenticated("wrong token for ", env_.task));
  // The answer goes when the throttle says; the right token never asks it.
  return throttle_.Failed(state_->peer_host())
      .then([refusal = kj::mv(refusal)]() mutable -> kj::Promise<void> { return kj::mv(refusal); });
}

GateService::~GateService() {
  if (!ticket_.empty() && env_.data_plane != nullptr) env_.data_plane->Revoke(ticket_);
}

}  // namespace tfd
