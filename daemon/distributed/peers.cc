#include "daemon/distributed/peers.h"

#include <charconv>

#include "daemon/rpc/kj_status.h"
#include "daemon/transport/data_plane.h"
#include "daemon/transport/stream_socket.h"

namespace tfd {
namespace {

constexpr kj::Duration kFirstBackoff = 50 * kj::MILLISECONDS;
constexpr kj::Duration kMaxBackoff = 1 * kj::SECONDS;

}  // namespace

Status CheckPeerProtocol(const std::string& task, uint32_t protocol, const std::string& self) {
  if (protocol == kPeerProtocol) return OkStatus();
  return errors::FailedPrecondition(
      task, " speaks peer protocol ", protocol,
      protocol == 0 ? " (a tfd from before the protocol handshake)" : "", " and ", self,
      " speaks peer protocol ", kPeerProtocol,
      ": every task of a cluster must run a tfd of one peer protocol");
}

StatusOr<std::pair<std::string, int>> SplitTaskName(const std::string& task) {
  // "/job:J/replica:0/task:T"
  const size_t job = task.find("/job:");
  const size_t slash = task.find('/', job + 5);
  const size_t t = task.rfind("/task:");
  if (job != 0 || slash == std::string::npos || t == std::string::npos) {
    return errors::InvalidArgument("'", task, "' is not a task name like /job:ps/replica:0/task:0");
  }
  int index = -1;
  const char* begin = task.data() + t + 6;
  auto [end, ec] = std::from_chars(begin, task.data() + task.size(), index);
  if (ec != std::errc() || end != task.data() + task.size() || index < 0) {
    return errors::InvalidArgument("'", task, "' has a bad task index");
  }
  return std::make_pair(task.substr(5, slash - 5), index);
}

Peers::Peers(kj::AsyncIoProvider& io, kj::Timer& timer, ClusterSpec cluster, std::string self_task,
             TaskServices self, std::string token, DataPlane* data_plane,
             std::shared_ptr<spdlog::logger> logger)
    : io_(io),
      timer_(timer),
      cluster_(std::move(cluster)),
      self_task_(std::move(self_task)),
      self_(kj::mv(self)),
      token_(std::move(token)),
      data_plane_(data_plane),
      logger_(std::move(logger)),
      errors_(logger_, "a connection watch"),
      watches_(errors_) {
  // A stream that breaks takes the task's control connection with it, so
  // the next caller logs in and opens the data plane afresh.
  if (data_plane_ != nullptr) {
    data_plane_->SetOnLinkLost([this](const std::string& task) { Forget(task); });
  }
}

Peers::~Peers() {
  if (data_plane_ != nullptr) data_plane_->SetOnLinkLost(nullptr);
}

kj::Promise<TaskServices> Peers::Services(const std::string& task, kj::TimePoint deadline,
                                          Patience patience) {
  if (task == self_task_) return TaskServices(self_);
  auto split = SplitTaskName(task);
  if (!split.ok()) return KjFromStatus(split.status());
  auto address = cluster_.TaskAddress(split->first, split->second);
  if (!address.ok()) return KjFromStatus(address.status());
  Peer& peer = peers_[task];
  peer.address = *address;
  const bool patient = patience != Patience::kFailIfDown;
  if (patience == Patience::kWaitForFirstStart && peer.reached) {
    deadline = kj::min(deadline, timer_.now() + kBackPatience);
  }
  if (peer.services == nullptr || peer.failed) {
    peer.give_up_at = patient ? deadline : kj::origin<kj::TimePoint>();
    StartAttempt(task, peer);
  } else if (!peer.connected) {
    // Join the attempt in flight; a patient caller keeps it going for as
    // long as it waits, an impatient one does not wait for a task already
    // found down.
    if (patient) {
      peer.give_up_at = kj::max(peer.give_up_at, deadline);
    } else if (!peer.last_error.empty()) {
      // Attributed to the task its message names first.
      return KjFromStatus(errors::Unavailable(task, " at ", peer.address,
                                              " cannot be reached: ", peer.last_error)
                              .WithDetails({.task = task}));
    }
  }
  return Waiter(task, peer, deadline);
}

void Peers::StartAttempt(const std::string& task, Peer& peer) {
  const uint64_t attempt = ++peer.attempt;
  peer.connected = false;
  peer.failed = false;
  peer.last_error.clear();
  // The attempt marks its own outcome, whoever still waits on it: a failure
  // must not outlive the callers that saw it (they may have given up and
  // gone, taking any handler of theirs with them).
  peer.services = Connect(task, attempt, kFirstBackoff)
                      .then(
                          [this, task, attempt](TaskServices services) {
                            if (Peer* p = Current(task, attempt)) p->connected = p->reached = true;
                            return services;
                          },
                          [this, task, attempt](kj::Exception&& e) -> TaskServices {
                            if (Peer* p = Current(task, attempt)) p->failed = true;
                            kj::throwFatalException(kj::mv(e));
                          })
                      .fork();
}

kj::Promise<TaskServices> Peers::Waiter(const std::string& task, Peer& peer,
                                        kj::TimePoint deadline) {
  KJ_IF_MAYBE(services, peer.services) {
    auto branch = services->addBranch();
    if (peer.connected) return branch;
    auto expired = timer_.atTime(deadline).then([this, task]() -> TaskServices {
      const Peer& p = peers_[task];
      kj::throwFatalException(KjFromStatus(
          errors::Unavailable(task, " at ", p.address, " cannot be reached",
                              p.last_error.empty() ? std::string(" before the deadline")
                                                   : ": " + p.last_error)
              .WithDetails({.task = task})));
    });
    return branch.exclusiveJoin(kj::mv(expired));
  }
  return KjFromStatus(errors::Internal("no connection attempt to ", task));
}

kj::Promise<TaskServices> Peers::Connect(const std::string& task, uint64_t attempt,
                                         kj::Duration backoff) {
  Peer* peer = Current(task, attempt);
  if (peer == nullptr) {
    return KjFromStatus(errors::Unavailable("the connection attempt to ", task, " was dropped"));
  }
  return Dial(task, peer->address)
      .then([this, task, attempt](kj::Own<kj::AsyncIoStream> stream) {
        return Login(task, attempt, kj::mv(stream));
      })
      .catch_([this, task, attempt, backoff](kj::Exception&& e) -> kj::Promise<TaskServices> {
        const Status s = StatusFromKj(e);
        Peer* peer = Current(task, attempt);
        // A refused token stays refused, and a peer of another protocol
        // (or without a data plane) stays so: no point in asking again.
        if (peer == nullptr || s.code() == Code::kUnauthenticated ||
            s.code() == Code::kFailedPrecondition) {
          return kj::mv(e);
        }
        peer->last_error = s.message();
        const kj::TimePoint now = timer_.now();
        if (now >= peer->give_up_at) {
          return KjFromStatus(errors::Unavailable(task, " at ", peer->address,
                                                  " cannot be reached: ", s.message())
                                  .WithDetails({.task = task}));
        }
        // The last try falls on the deadline of the caller that waits longest.
        return timer_.afterDelay(kj::min(backoff, peer->give_up_at - now))
            .then([this, task, attempt, backoff]() {
              return Connect(task, attempt, kj::min(backoff * 2, kMaxBackoff));
            });
      });
}

kj::Promise<kj::Own<kj::AsyncIoStream>> Peers::Dial(const std::string& task,
                                                     const std::string& address,
                                                     bool data_stream) {
  return io_.getNetwork()
      .parseAddress(address.c_str())
      .then([](kj::Own<kj::NetworkAddress> addr) { return addr->connect().attach(kj::mv(addr)); })
      .then([this, task, address, data_stream](kj::Own<kj::AsyncIoStream> stream) {
        if (data_stream) SizeStreamSocket(*stream);  // the socket itself, under any TLS
        return tls_ ? tls_->WrapClient(kj::mv(stream), address, task)
                    : kj::Promise<kj::Own<kj::AsyncIoStream>>(kj::mv(stream));
      });
}

kj::Promise<void> Peers::OpenDataPlane(const std::string& task,
                                       proto::DataPlaneInvitation::Reader invitation) {
  auto bytes = [](capnp::Data::Reader d) {
    return std::string(reinterpret_cast<const char*>(d.begin()), d.size());
  };
  const DataPlane::Invitation invited{bytes(invitation.getAddress()),
                                      bytes(invitation.getTicket()), invitation.getHost()};
  if (data_plane_->SharesMemory(invited)) {
    ThrowIfError(data_plane_->ConnectShared(task, invited));
    return kj::READY_NOW;
  }
  // A stream to the task's own port, with the credential of the login.
  const std::string address = peers_[task].address;
  return Dial(task, address, true).then([this, task](kj::Own<kj::AsyncIoStream> stream) {
    return data_plane_->ConnectStream(task, kj::mv(stream),
                                      stream::Hello{.token = token_, .task = self_task_},
                                      tls_ != nullptr);
  });
}

kj::Promise<TaskServices> Peers::Login(const std::string& task, uint64_t attempt,
                                       kj::Own<kj::AsyncIoStream> stream) {
  auto connection = RpcConnection::Client(kj::mv(stream));
  auto request = connection->Bootstrap().castAs<proto::Gate>().loginRequest();
  request.setToken(
      kj::arrayPtr(reinterpret_cast<const capnp::byte*>(token_.data()), token_.size()));
  request.setPeer(self_task_);
  request.setProtocol(kPeerProtocol);
  auto answered = request.send().then(
      [this, task](capnp::Response<proto::Gate::LoginResults>&& r) -> kj::Promise<TaskServices> {
        auto s = r.getServices();
        // A task of an older protocol admits this one, not knowing better.
        if (Status same = CheckPeerProtocol(task, s.getProtocol(), self_task_); !same.ok()) {
          return KjFromStatus(same);
        }
        TaskServices services{s.getMaster(), s.getWorker(), s.getIncarnation()};
        if (data_plane_ == nullptr) return kj::mv(services);
        if (!s.hasDataPlane()) {
          return KjFromStatus(errors::FailedPrecondition(
              task, " gave no data-plane invitation at login: a tfd without a data plane?"));
        }
        return OpenDataPlane(task, s.getDataPlane())
            .then([services = kj::mv(services)]() mutable { return kj::mv(services); })
            .attach(kj::mv(r));
      });
  auto silent = timer_.afterDelay(kLoginTimeout).then([]() -> TaskServices {
    kj::throwFatalException(KjFromStatus(errors::Unavailable(
        "it accepted the connection but did not answer the login within ",
        kLoginTimeout / kj::SECONDS, " s")));
  });
  return answered.exclusiveJoin(kj::mv(silent))
      .then([this, task, attempt, connection = kj::mv(connection)](TaskServices services) mutable
            -> TaskServices {
        Peer* peer = Current(task, attempt);
        if (peer == nullptr) {
          kj::throwFatalException(
              KjFromStatus(errors::Unavailable("the connection attempt to ", task, " was dropped")));
        }
        watches_.add(connection->OnDisconnect()
                         .then([this, task, attempt]() {
                           if (Current(task, attempt) == nullptr) return;  // forgotten already
                           if (logger_) logger_->warn("lost the connection to {}", task);
                           Forget(task);
                         })
                         // A connection we dropped ourselves ends its watch with it.
                         .catch_([](kj::Exception&&) {}));
        peer->connection = kj::mv(connection);
        return services;
      });
}

Peers::Peer* Peers::Current(const std::string& task, uint64_t attempt) {
  auto it = peers_.find(task);
  if (it == peers_.end() || it->second.attempt != attempt) return nullptr;
  return &it->second;
}

uint64_t Peers::ConnectionNumber(const std::string& task) const {
  auto it = peers_.find(task);
  return it == peers_.end() ? 0 : it->second.connection_number;
}

void Peers::Forget(const std::string& task) {
  auto it = peers_.find(task);
  if (it == peers_.end()) return;
  Peer& peer = it->second;
  // An attempt still in flight has nothing stale to forget: it is the fresh start.
  if (peer.services != nullptr && !peer.connected && !peer.failed) return;
  peer.services = nullptr;
  peer.connection = nullptr;
  if (data_plane_ != nullptr) data_plane_->Disconnect(task);
  peer.connected = false;
  peer.failed = false;
  ++peer.attempt;
  ++peer.connection_number;
}

}  // namespace tfd
