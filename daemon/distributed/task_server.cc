#include "daemon/distributed/task_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <fmt/format.h>

#include "daemon/distributed/gate_service.h"
#include "daemon/rpc/frame_ledger.h"
#include "daemon/rpc/pre_login_stream.h"
#include "daemon/transport/data_plane.h"
#include "daemon/transport/stream_frames.h"
#include "daemon/transport/stream_socket.h"
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

// One accepted connection: TLS when the task runs it, then either Cap'n
// Proto RPC (held to the pre-login budget until its Gate's login) or, when
// it starts with the stream magic, a data-plane stream (its hello judged by
// the same Authenticator); its login deadline; and the one log line that
// says why it ended when it ended badly.
class TaskServer::Connection {
 public:
  Connection(TaskServer& server, ConnectionTable::Id id, PeerName peer,
             kj::Own<kj::AsyncIoStream> stream)
      : server_(server),
        id_(id),
        peer_(std::move(peer)),
        accepted_(server.timer_.now()) {
    socket_ = stream.get();
    stream_ = kj::mv(stream);
    state_ = kj::refcounted<LoginState>(peer_.address, peer_.host);
    state_->OnLogin([this]() {
      KJ_IF_MAYBE(limited, pre_login_) { (*limited)->Lift(); }
      server_.table_.LoggedIn(id_);
    });
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
    auto serve = Handshake()
                     .then([this]() { return ahead_->Peek(stream::kMagic.size()); })
                     .then([this](kj::ArrayPtr<const kj::byte> first) -> kj::Promise<void> {
                       if (first == kj::arrayPtr(stream::kMagic.data(), stream::kMagic.size())) {
                         return ServeStream();
                       }
                       return ServeRpc();
                     })
                     .catch_([this](kj::Exception&& e) {
                       SetReason("broken connection", e.getDescription().cStr());
                     });
    return serve.exclusiveJoin(kj::mv(closed_))
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

  // TLS's handshake, when the task runs TLS (under the login deadline, like
  // the login), and the read-ahead buffer that tells the protocols apart.
  kj::Promise<void> Handshake() {
    auto ready = [this](kj::Own<kj::AsyncIoStream> stream) {
      auto ahead = kj::heap<ReadAheadStream>(kj::mv(stream));
      ahead_ = ahead.get();
      stream_ = kj::mv(ahead);
    };
    if (!server_.tls_) {
      ready(kj::mv(stream_));
      return kj::READY_NOW;
    }
    return server_.tls_->WrapServer(kj::mv(stream_))
        .then(
            [this, ready](Tls::Secured secured) {
              state_->SetTls(kj::mv(secured.peer));
              ready(kj::mv(secured.stream));
            },
            [this](kj::Exception&& e) {
              SetReason("TLS handshake", std::string(e.getDescription().cStr()));
              kj::throwFatalException(kj::mv(e));
            });
  }

  kj::Promise<void> ServeRpc() {
    // Every frame is charged to the task's memory budget until its message
    // goes, and a connection's frames together may hold as much as its
    // largest may; one that finds no room waits at most as long as a login.
    const ServerLimits& limits = server_.limits_;
    auto ledger = kj::refcounted<FrameLedger>(
        server_.timer_, server_.env_.kernel_env ? server_.env_.kernel_env->memory : nullptr,
        limits.login_timeout.count() * kj::MILLISECONDS, server_.max_message_bytes_);
    auto limited = kj::heap<PreLoginStream>(
        kj::mv(stream_),
        PreLoginStream::Limits{.pre_login_bytes = limits.pre_login_bytes,
                               .max_frame_bytes = server_.max_message_bytes_},
        kj::addRef(*ledger));
    pre_login_ = limited.get();
    auto watched = kj::heap<WatchedMessageStream>(kj::mv(limited), kj::mv(ledger));
    watch_ = watched.get();
    // A master of its own, which counts this client's sessions.
    auto master = kj::heap<MasterService>(server_.env_, *server_.worker_server_,
                                          limits.max_sessions_per_client);
    MasterService& master_server = *master;
    auto gate = kj::heap<GateService>(
        server_.env_, TaskServices{kj::mv(master), server_.worker_, server_.env_.incarnation},
        GateService::Servers{&master_server, server_.worker_server_}, server_.auth_,
        kj::addRef(*state_));
    rpc_ = RpcConnection::Server(kj::mv(watched), kj::mv(gate));
    return rpc_->OnDisconnect();
  }

  // A data-plane stream: its hello's credential, then the data plane reads
  // it until it ends.
  kj::Promise<void> ServeStream() {
    DataPlane* plane = server_.env_.data_plane;
    if (plane == nullptr) {
      SetReason("stream refused", "this task has no data plane");
      return kj::READY_NOW;
    }
    return stream::ReceiveHello(*stream_).then([this, plane](stream::Hello hello) {
      return server_.auth_
          .Check({.token = hello.token, .task = hello.task, .peer = peer_.address,
                  .host = peer_.host, .tls = state_->tls()})
          .then([this, plane, hello](StatusOr<Caller> caller) -> kj::Promise<void> {
            Status admitted = caller.status();
            if (admitted.ok()) admitted = CheckStreamOpener(hello, *caller);
            if (!admitted.ok()) return Refuse(plane, admitted);
            state_->SetLoggedIn();
            SizeStreamSocket(*socket_);
            const bool tls = server_.tls_ != nullptr;
            return plane->ServeStream(hello.task, kj::mv(stream_), tls).then([this](Status why) {
              if (!why.ok()) SetReason("stream ended", why.ToString());
            });
          });
    });
  }

  // Whether the stream's opener may send here: a task of the cluster (not
  // this one) speaking this version of the protocol.
  Status CheckStreamOpener(const stream::Hello& hello, const Caller& caller) const {
    if (hello.version != stream::kStreamVersion) {
      return errors::FailedPrecondition(
          "a data-plane stream of protocol version ", hello.version, " from ", hello.task,
          "; this tfd speaks version ", stream::kStreamVersion, ": run the same tfd on every task");
    }
    if (hello.task != caller.task || hello.task == server_.env_.task ||
        !server_.env_.cluster.HasTask(hello.task)) {
      return errors::Unauthenticated("a data-plane stream from '", hello.task,
                                     "', which is no other task of the cluster");
    }
    return OkStatus();
  }

  kj::Promise<void> Refuse(DataPlane* plane, const Status& why) {
    SetReason("stream refused", why.ToString());
    stream::Welcome refusal = plane->Welcome();
    refusal.status = why;
    return stream::SendWelcome(*stream_, refusal).catch_([](kj::Exception&&) {});
  }

  void Finish() {
    server_.table_.Remove(id_);
    server_.live_.erase(id_);
    if (kind_.empty()) {
      KJ_IF_MAYBE(limited, pre_login_) {
        KJ_IF_MAYBE(refused, (*limited)->refusal()) { SetReason(refused->kind, refused->why); }
      }
      KJ_IF_MAYBE(watched, watch_) {
        KJ_IF_MAYBE(why, (*watched)->failure()) { SetReason("broken connection", *why); }
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
  ReadAheadStream* ahead_ = nullptr;  // owned through stream_, then by what serves it
  kj::Own<kj::AsyncIoStream> stream_;  // until ServeRpc or ServeStream takes it
  // The accepted socket, under any TLS and read-ahead: owned through stream_
  // (then by what serves it); for its buffer sizes.
  kj::AsyncIoStream* socket_ = nullptr;
  kj::Maybe<PreLoginStream*> pre_login_;    // owned through rpc_
  kj::Maybe<WatchedMessageStream*> watch_;  // owned through rpc_
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
      auth_(env.task, token_, tls_ != nullptr, throttle_, log_),
      table_(limits),
      max_message_bytes_(limits.max_message_bytes > 0
                             ? limits.max_message_bytes
                             : DefaultMaxMessageBytes(env.kernel_env ? env.kernel_env->limits
                                                                     : SizeLimits())),
      accept_backoff_(kAcceptRetry),
      errors_(env.logger, "a connection"),
      connections_(errors_) {
  auto worker = kj::heap<WorkerService>(env, limits.max_registered_graphs);
  WorkerService& local = *worker;
  worker_server_ = worker.get();
  worker_ = kj::mv(worker);  // the capability keeps it for the server's life
  auto master = kj::heap<MasterService>(env, local, limits.max_sessions_per_client);
  master_ = kj::mv(master);
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
