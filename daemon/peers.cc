#include "daemon/peers.h"

#include <charconv>

#include "daemon/rpc_status.h"

namespace tfd {

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
             TaskServices self, std::string token,
             std::shared_ptr<spdlog::logger> logger)
    : io_(io),
      timer_(timer),
      cluster_(std::move(cluster)),
      self_task_(std::move(self_task)),
      self_(kj::mv(self)),
      token_(std::move(token)),
      logger_(std::move(logger)),
      errors_(logger_, "a connection watch"),
      watches_(errors_) {}

kj::Promise<TaskServices> Peers::Services(const std::string& task,
                                                     kj::TimePoint deadline) {
  if (task == self_task_) return TaskServices(self_);
  auto split = SplitTaskName(task);
  if (!split.ok()) return KjFromStatus(split.status());
  auto address = cluster_.TaskAddress(split->first, split->second);
  if (!address.ok()) return KjFromStatus(address.status());
  Peer& peer = peers_[task];
  KJ_IF_MAYBE(pending, peer.services) { return pending->addBranch(); }
  auto fork = Connect(task, *address, deadline, 50 * kj::MILLISECONDS).fork();
  auto branch = fork.addBranch();
  peer.services = kj::mv(fork);
  const uint64_t incarnation = peer.incarnation;
  // A failed attempt is forgotten so the next caller tries afresh.
  return branch.catch_([this, task, incarnation](kj::Exception&& e) -> TaskServices {
    if (Incarnation(task) == incarnation) Forget(task);
    kj::throwFatalException(kj::mv(e));
  });
}

kj::Promise<TaskServices> Peers::Connect(const std::string& task,
                                                    const std::string& address,
                                                    kj::TimePoint deadline, kj::Duration backoff) {
  return io_.getNetwork()
      .parseAddress(address.c_str())
      .then([](kj::Own<kj::NetworkAddress> addr) { return addr->connect().attach(kj::mv(addr)); })
      .then(
          [this, task](kj::Own<kj::AsyncIoStream> stream) {
            auto connection = RpcConnection::Client(kj::mv(stream));
            auto gate = connection->Bootstrap().castAs<proto::Gate>();
            auto request = gate.loginRequest();
            request.setToken(kj::arrayPtr(reinterpret_cast<const capnp::byte*>(token_.data()),
                                          token_.size()));
            Peer& peer = peers_[task];
            const uint64_t incarnation = peer.incarnation;
            watches_.add(connection->OnDisconnect().then([this, task, incarnation]() {
              if (Incarnation(task) != incarnation) return;
              if (logger_) logger_->warn("lost the connection to {}", task);
              Forget(task);
            }));
            peer.connection = kj::mv(connection);
            return request.send().then(
                [](capnp::Response<proto::Gate::LoginResults>&& r) {
                  auto s = r.getServices();
                  return TaskServices{s.getMaster(), s.getWorker()};
                });
          },
          [this, task, address, deadline, backoff](kj::Exception&& e)
              -> kj::Promise<TaskServices> {
            if (timer_.now() + backoff >= deadline) {
              return KjFromStatus(errors::Unavailable(
                  task, " at ", address, " cannot be reached: ",
                  StatusFromKj(e).message()));
            }
            return timer_.afterDelay(backoff).then([this, task, address, deadline, backoff]() {
              return Connect(task, address, deadline, kj::min(backoff * 2, 1 * kj::SECONDS));
            });
          });
}

uint64_t Peers::Incarnation(const std::string& task) const {
  auto it = peers_.find(task);
  return it == peers_.end() ? 0 : it->second.incarnation;
}

void Peers::Forget(const std::string& task) {
  auto it = peers_.find(task);
  if (it == peers_.end()) return;
  Peer& peer = it->second;
  peer.services = nullptr;
  peer.connection = nullptr;
  ++peer.incarnation;
}


}  // namespace tfd
