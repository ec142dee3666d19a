#include "daemon/systemd_notify.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <limits>
#include <string>

namespace tfd {

StatusOr<std::unique_ptr<SystemdNotifier>> SystemdNotifier::FromEnvironment(
    const std::function<const char*(const char*)>& getenv) {
  const char* socket_name = getenv("NOTIFY_SOCKET");
  if (socket_name == nullptr || *socket_name == '\0') return std::unique_ptr<SystemdNotifier>();
  const std::string address = socket_name;

  auto n = std::make_unique<SystemdNotifier>(PrivateKey{});
  n->address_ = address;
  n->peer_.sun_family = AF_UNIX;
  const size_t room = sizeof(n->peer_.sun_path);
  if (address[0] == '@') {
    // The abstract namespace: a leading NUL, then the name, no terminator.
    if (address.size() > room) {
      return errors::InvalidArgument("NOTIFY_SOCKET '", address, "' is longer than the ", room,
                                     " bytes a socket address holds");
    }
    n->peer_.sun_path[0] = '\0';
    memcpy(n->peer_.sun_path + 1, address.data() + 1, address.size() - 1);
    n->peer_len_ = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + address.size());
  } else if (address[0] == '/') {
    if (address.size() >= room) {
      return errors::InvalidArgument("NOTIFY_SOCKET '", address, "' is longer than the ",
                                     room - 1, " bytes a socket path may have");
    }
    memcpy(n->peer_.sun_path, address.c_str(), address.size() + 1);
    n->peer_len_ = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + address.size() + 1);
  } else {
    return errors::InvalidArgument("NOTIFY_SOCKET '", address, "' is neither an absolute path ",
                                   "nor an abstract socket name (@name)");
  }

  if (const char* usec = getenv("WATCHDOG_USEC"); usec != nullptr && *usec != '\0') {
    // WATCHDOG_PID: set by systemd for the main process; a child that
    // inherited the variables must not keep its parent alive.
    const char* pid = getenv("WATCHDOG_PID");
    const bool for_us = pid == nullptr || *pid == '\0' || std::to_string(getpid()) == pid;
    char* end = nullptr;
    errno = 0;
    const unsigned long long value = strtoull(usec, &end, 10);
    if (errno != 0 || end == usec || *end != '\0' || value == 0 ||
        value > static_cast<unsigned long long>(std::numeric_limits<int64_t>::max())) {
      return errors::InvalidArgument("WATCHDOG_USEC must be a positive number of microseconds, "
                                     "not '", usec, "'");
    }
    if (for_us) {
      n->keep_alive_interval_ =
          std::chrono::microseconds(std::max<int64_t>(1, static_cast<int64_t>(value / 2)));
    }
  }

  // Non-blocking: a manager that does not read must not stall the event
  // loop; a keep-alive it misses is followed by the next one.
  n->fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (n->fd_ < 0) {
    return errors::Internal("cannot create a socket to notify '", address, "': ",
                            strerror(errno));
  }
  return n;
}

SystemdNotifier::~SystemdNotifier() {
  if (fd_ >= 0) close(fd_);
}

Status SystemdNotifier::Notify(std::string_view state) {
  const ssize_t sent = sendto(fd_, state.data(), state.size(), MSG_NOSIGNAL,
                              reinterpret_cast<const sockaddr*>(&peer_), peer_len_);
  if (sent < 0) {
    return errors::Unavailable("cannot notify the service manager at NOTIFY_SOCKET '", address_,
                               "': ", strerror(errno));
  }
  if (static_cast<size_t>(sent) != state.size()) {
    return errors::Unavailable("the service manager at NOTIFY_SOCKET '", address_, "' took ",
                               sent, " of ", state.size(), " bytes");
  }
  return OkStatus();
}

kj::Promise<void> SystemdNotifier::KeepAlive(kj::Timer& timer,
                                             std::shared_ptr<spdlog::logger> logger) {
  if (!keep_alive_interval_) return kj::NEVER_DONE;
  logger->info("systemd watchdog: WATCHDOG=1 every {} ms", keep_alive_interval_->count() / 1000);
  // Eager: nothing waits on this promise, yet it must run.
  return KeepAliveLoop(timer, std::move(logger)).eagerlyEvaluate(nullptr);
}

kj::Promise<void> SystemdNotifier::KeepAliveLoop(kj::Timer& timer,
                                                 std::shared_ptr<spdlog::logger> logger) {
  return timer.afterDelay(keep_alive_interval_->count() * kj::MICROSECONDS)
      .then([this, &timer, logger = std::move(logger)]() mutable {
        if (Status s = Notify("WATCHDOG=1"); !s.ok()) {
          logger->warn("systemd watchdog: {}", s.ToString());
        }
        return KeepAliveLoop(timer, std::move(logger));
      });
}

}  // namespace tfd
