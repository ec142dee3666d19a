#include "daemon/distributed/gate_service.h"

#include <fmt/format.h>
#include <kj/debug.h>

#include "daemon/rpc/kj_status.h"
#include "daemon/transport/data_plane.h"

namespace tfd {

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
  auto params = context.getParams();
  auto token = params.getToken();
  Credentials credentials{
      .token = std::string(reinterpret_cast<const char*>(token.begin()), token.size()),
      .task = params.getPeer(),
      .peer = state_->peer(),
      .host = state_->peer_host(),
      .tls = state_->tls()};
  KJ_IF_MAYBE(in, caller_) {
    // A second login on a connection that is in already is not judged
    // again, but it cannot change who the caller is.
    if (credentials.task != in->task && !in->unrestricted) {
      return KjFromStatus(errors::Unauthenticated("a second login as ", credentials.task,
                                                  " on a connection logged in as ",
                                                  in->Describe()));
    }
    if (Status in_again = Admit(context, *in); !in_again.ok()) return KjFromStatus(in_again);
    return kj::READY_NOW;
  }
  return auth_.Check(credentials).then([this, context](StatusOr<Caller> caller) mutable {
    ThrowIfError(caller.status());
    ThrowIfError(Admit(context, *caller));
  });
}

Status GateService::Admit(LoginContext& context, const Caller& caller) {
  // A task of another peer protocol would misread this one's calls and
  // messages, and this one its: refused before it is in (peers.h).
  if (!caller.task.empty()) {
    TFD_RETURN_IF_ERROR(
        CheckPeerProtocol(caller.task, context.getParams().getProtocol(), env_.task));
  }
  caller_ = caller;
  state_->SetLoggedIn();
  auto services = context.getResults().initServices();
  if (caller.unrestricted) {
    services.setMaster(services_.master);
    services.setWorker(services_.worker);
  } else {
    KJ_REQUIRE(servers_.master != nullptr && servers_.worker != nullptr,
               "a restricted login needs the servers to guard");
    services.setMaster(Guard(services_.master, *servers_.master, caller).castAs<proto::Master>());
    services.setWorker(Guard(services_.worker, *servers_.worker, caller).castAs<proto::Worker>());
  }
  services.setTask(env_.task);
  services.setCluster(env_.cluster.ToJson());
  services.setIncarnation(env_.incarnation);
  services.setProtocol(kPeerProtocol);
  // A data-plane invitation for a task that logged in (under TLS, the task
  // its certificate names).
  const std::string& peer = caller.task;
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
  return OkStatus();
}

GateService::~GateService() {
  if (!ticket_.empty() && env_.data_plane != nullptr) env_.data_plane->Revoke(ticket_);
}

}  // namespace tfd
