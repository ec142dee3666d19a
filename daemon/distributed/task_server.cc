#include "daemon/distributed/task_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <fmt/format.h>

#include "daemon/distributed/gate_service.h"
#include "daemon/rpc/pre_login_stream.h"
#include "daemon/rpc/read_ahead_stream.h"
#include "daemon/rpc/watched_message_stream.h"

namespace tfd {
namespace {

// After a failed accept. Short while shedding makes room, growing while it
// cannot, so a persistent error costs a retry a second at most.
constexpr kj::Duration kAcceptRetry = 10 * kj::MILLISECONDS;
constexpr kj::Duration kMaxAcceptBackoff = 1 * kj::SECONDS;

struct PeerName {
  std::string address;  // for logs: "10.0.0.7:4711", "[::1]:4711"
  std::string host;     // the key of the per-address limits: "10.0.0.7", "::1"
};

PeerName PeerOf(kj::AsyncIoStream& stream) {
  sockaddr_storage ss{};
  kj::uint len = sizeof(ss);
  if (kj::runCatchingExceptions([&]() {
        stream.getpeername(reinterpret_cast<sockaddr*>(&ss), &len);
      }) != nullptr) {
    return {"an unknown peer", "unknown"};
  }
  char text[INET6_ADDRSTRLEN] = {};
  if (ss.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &a->sin_addr, text, sizeof(text));
    return {fmt::format("{}:{}", text, ntohs(a->sin_port)), text};
  }
  if (ss.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
    if (IN6_IS_ADDR_V4MAPPED(&a->sin6_addr)) {
      // A dual-stack listener sees IPv4 peers as ::ffff:a.b.c.d; one address, one key.
      inet_ntop(AF_INET, &a->sin6_addr.s6_addr[12], text, sizeof(text));
      return {fmt::format("{}:{}", text, ntohs(a->sin6_port)), text};
    }
    inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof(text));
    return {fmt::format("[{}]:{}", text, ntohs(a->sin6_port)), text};
  }
  return {"a local socket", "local"};
}

double Seconds(kj::Duration d) { return static_cast<double>(d / kj::MILLISECONDS) / 1000.0; }

}  // namespace

// One accepted connection: its byte stream held to the pre-login budget,
// the RPC system serving its Gate, its login deadline, and the one log line
// that says why it ended when it ended badly.
class TaskServer::Connection {
 public:
  Connection(TaskServer& server, ConnectionTable::Id id, PeerName peer,
             kj::Own<kj::AsyncIoStream> stream)
      : server_(server),
        id_(id),
        peer_(std::move(peer)),
        accepted_(server.timer_.now()) {
    if (server.tls_) {
      // The handshake runs as the first read needs it; until then the
      // stream holds reads back, under the login deadline like the login.
      stream = kj::newPromisedStream(server.tls_->WrapServer(kj::mv(stream))
                                         .catch_([this](kj::Exception&& e)
                                                     -> kj::Own<kj::AsyncIoStream> {
                                           SetReason("TLS handshake",
                                                     std::string(e.getDescription().cStr()));
                                           kj::throwFatalException(kj::mv(e));
                                         }));
    }
    auto limited = kj::heap<PreLoginStream>(kj::heap<ReadAheadStream>(kj::mv(stream)),
                                            server.limits_.pre_login_bytes);
    pre_login_ = limited.get();
    auto watched = kj::heap<WatchedMessageStream>(kj::mv(limited));
    watch_ = watched.get();
    state_ = kj::refcounted<LoginState>(peer_.address, peer_.host);
    state_->OnLogin([this]() {
      pre_login_->Lift();
      server_.table_.LoggedIn(id_);
    });
    auto gate = kj::heap<GateService>(server.env_, server.token_,
                                      TaskServices{server.master_, server.worker_, server.env_.incarnation},
                                      server.throttle_, server.log_, kj::addRef(*state_));
    rpc_ = RpcConnection::Server(kj::mv(watched), kj::mv(gate));
    auto paf = kj::newPromiseAndFulfiller<void>();
    close_ = kj::mv(paf.fulfiller);
    closed_ = kj::mv(paf.promise);
  }

  ~Connection() {
    state_->Detach();
    server_.table_.Remove(id_);
    server_.live_.erase(id_);
  }

  // Resolves once the connection has ended — the peer left, the RPC system
  // dropped it, it missed its login deadline or was closed — and was logged.
  kj::Promise<void> Run() {
    auto deadline =
        server_.timer_.afterDelay(server_.limits_.login_timeout.count() * kj::MILLISECONDS)
            .then([this]() -> kj::Promise<void> {
              if (state_->logged_in()) return kj::NEVER_DONE;
              SetReason("login deadline",
                        fmt::format("no {}login within {:g} s (--login-timeout)",
                                    server_.tls_ ? "TLS handshake and " : "",
                                    server_.limits_.login_timeout.count() / 1000.0));
              return kj::READY_NOW;
            });
    return rpc_->OnDisconnect()
        .exclusiveJoin(kj::mv(closed_))
        .exclusiveJoin(kj::mv(deadline))
        .then([this]() { Finish(); });
  }

  // Ends the connection; `reason` is logged under `kind`.
  void Close(const std::string& kind, const std::string& reason) {
    SetReason(kind, reason);
    if (close_->isWaiting()) close_->fulfill();
  }

  double waited_seconds() const { return Seconds(server_.timer_.now() - accepted_); }

 private:
  void SetReason(const std::string& kind, const std::string& reason) {
    if (!kind_.empty()) return;
    kind_ = kind;
    reason_ = reason;
  }

  void Finish() {
    server_.table_.Remove(id_);
    server_.live_.erase(id_);
    if (kind_.empty()) {
      KJ_IF_MAYBE(why, pre_login_->refusal()) {
        SetReason("pre-login limit", *why);
      } else KJ_IF_MAYBE(why, watch_->failure()) {
        SetReason("broken connection", *why);
      }
    }
    if (!kind_.empty()) {
      server_.log_.Warn(kind_, fmt::format("connection from {} closed: {}", peer_.address, reason_));
    }
  }

  TaskServer& server_;
  const ConnectionTable::Id id_;
  const PeerName peer_;
  const kj::TimePoint accepted_;
  kj::Own<LoginState> state_;
  PreLoginStream* pre_login_ = nullptr;    // owned through rpc_
  WatchedMessageStream* watch_ = nullptr;  // owned through rpc_
  kj::Own<RpcConnection> rpc_;
  kj::Own<kj::PromiseFulfiller<void>> close_;
  kj::Promise<void> closed_ = nullptr;
  std::string kind_, reason_;  // why it ended, when it ended badly
};

TaskServer::TaskServer(TaskEnv& env, kj::AsyncIoProvider& io, kj::Timer& timer, std::string token,
                       ServerLimits limits, std::shared_ptr<Tls> tls)
    : env_(env),
      io_(io),
      timer_(timer),
      token_(std::move(token)),
      limits_(limits),
      tls_(std::move(tls)),
      master_(nullptr),
      worker_(nullptr),
      log_(env.logger, timer),
      throttle_(timer, {.max_backoff = limits.failed_login_max_delay.count() * kj::MILLISECONDS,
                        .rate = limits.failed_login_rate}),
      table_(limits),
      accept_backoff_(kAcceptRetry),
      errors_(env.logger, "a connection"),
      connections_(errors_) {
  auto worker = kj::heap<WorkerService>(env);
  WorkerService& local = *worker;
  worker_ = kj::mv(worker);  // the capability keeps it for the server's life
  master_ = kj::heap<MasterService>(env, local);
  peers_ = kj::heap<Peers>(io, timer, env.cluster, env.task,
                           TaskServices{master_, worker_, env.incarnation}, token_, env.data_plane,
                           env.logger);
  if (tls_) peers_->UseTls(tls_);
  env_.peers = peers_.get();
  reaping_ = ReapAbandonedSteps().eagerlyEvaluate(nullptr);
}

TaskServer::~TaskServer() { env_.peers = nullptr; }

kj::Promise<void> TaskServer::ReapAbandonedSteps() {
  // Long past any step's deadline: a table untouched this long belongs to a
  // step nobody will run or end here.
  constexpr auto kAbandoned = std::chrono::minutes(10);
  return timer_.afterDelay(60 * kj::SECONDS).then([this, kAbandoned]() {
    const auto before = LocalRendezvous::Clock::now() - std::max<std::chrono::milliseconds>(
                                                             kAbandoned, env_.step_timeout * 2);
    if (const size_t n = env_.rendezvous.Reap(before); n > 0 && env_.logger) {
      env_.logger->warn("dropped the pushed tensors of {} step(s) that never ran here", n);
    }
    return ReapAbandonedSteps();
  });
}

kj::Promise<unsigned> TaskServer::Listen(const std::string& address) {
  return io_.getNetwork().parseAddress(address.c_str()).then(
      [this](kj::Own<kj::NetworkAddress> addr) {
        listener_ = addr->listen();
        const unsigned port = listener_->getPort();
        accepting_ = AcceptLoop().eagerlyEvaluate([this](kj::Exception&& e) {
          // Not expected: AcceptLoop handles its own errors.
          if (env_.logger) env_.logger->error("accept loop ended: {}", e.getDescription().cStr());
        });
        return port;
      });
}

kj::Promise<void> TaskServer::AcceptLoop() {
  // evalNow: kj's accept() throws EMFILE at once rather than rejecting.
  return kj::evalNow([this]() { return listener_->accept(); })
      .then(
          [this](kj::Own<kj::AsyncIoStream> stream) -> kj::Promise<void> {
            accept_backoff_ = kAcceptRetry;
            KJ_IF_MAYBE(e, kj::runCatchingExceptions([&]() { Serve(kj::mv(stream)); })) {
              log_.Warn("accept error", fmt::format("cannot serve a new connection: {}",
                                                    e->getDescription().cStr()));
            }
            return kj::READY_NOW;
          },
          [this](kj::Exception&& e) { return AcceptFailed(kj::mv(e)); })
      .then([this]() { return AcceptLoop(); });
}

kj::Promise<void> TaskServer::AcceptFailed(kj::Exception&& e) {
  // kj reports EMFILE, ENFILE, ENOBUFS and ENOMEM as OVERLOADED. The
  // connection stays queued in the kernel; closing one that has not logged
  // in frees the descriptor it needs.
  bool shed = false;
  if (e.getType() == kj::Exception::Type::OVERLOADED) {
    shed = ShedOldestPending("to free a file descriptor for a new connection");
  }
  kj::Duration delay = kAcceptRetry;
  if (!shed) {
    delay = accept_backoff_;
    accept_backoff_ = kj::min(accept_backoff_ * 2, kMaxAcceptBackoff);
  }
  log_.Warn("accept error",
            fmt::format("cannot accept a connection: {}; {}, retrying in {:g} s",
                        e.getDescription().cStr(),
                        shed ? "shed one that had not logged in" : "none to shed", Seconds(delay)));
  return timer_.afterDelay(delay);
}

void TaskServer::Serve(kj::Own<kj::AsyncIoStream> stream) {
  PeerName peer = PeerOf(*stream);
  auto admission = table_.Admit(peer.host);
  if (!admission.admitted) {
    log_.Warn("connection refused",
              fmt::format("connection from {} refused: {}", peer.address, admission.refusal));
    return;  // dropping the stream closes it
  }
  if (admission.shed) Shed(*admission.shed, admission.shed_reason);
  KJ_ON_SCOPE_FAILURE(table_.Remove(admission.id));
  auto connection = kj::heap<Connection>(*this, admission.id, std::move(peer), kj::mv(stream));
  live_[admission.id] = connection.get();
  auto run = connection->Run();
  connections_.add(run.attach(kj::mv(connection)));
}

bool TaskServer::ShedOldestPending(const std::string& why) {
  auto id = table_.OldestPending();
  if (!id) return false;
  Shed(*id, why);
  return true;
}

void TaskServer::Shed(ConnectionTable::Id id, const std::string& why) {
  table_.Remove(id);  // off the books now: it no longer counts, nor is shed twice
  auto it = live_.find(id);
  if (it != live_.end()) {
    it->second->Close("shed", fmt::format("shed after {:.1f} s without a login, {}",
                                          it->second->waited_seconds(), why));
  }
}

void TaskServer::StopAccepting() {
  accepting_ = nullptr;
  listener_ = nullptr;
}

}  // namespace tfd
