// SystemdNotifier: tells the service manager that started tfd how the task
// is doing, over the sd_notify(3) datagram protocol: "READY=1" once tfd
// listens, "STOPPING=1" when it starts to drain, "WATCHDOG=1" keep-alives
// while $WATCHDOG_USEC asks for them. tfd@.service is Type=notify, so units
// ordered After= a task start once it accepts connections, not once it has
// forked; with WatchdogSec= a task whose event loop hangs is restarted.
//
// Why not libsystemd: the protocol is one datagram on the AF_UNIX socket
// named by $NOTIFY_SOCKET (a path, or "@name" in the abstract namespace),
// documented as stable and meant to be spoken without the library; doing
// it here keeps tfd's binaries and its container image free of a library
// that hosts, Slurm nodes and pods without systemd have no use for.
//
// Without $NOTIFY_SOCKET (tfd started by hand, by tfctl start, srun or a
// pod) there is no notifier at all: FromEnvironment returns nullptr.
//
// Thread-safety: one thread; tfd uses it from its event-loop thread.
//
//   auto notifier = SystemdNotifier::FromEnvironment(::getenv);  // StatusOr
//   if (*notifier) (*notifier)->Notify("READY=1");
//   kj::Promise<void> keep_alive = (*notifier)->KeepAlive(timer, logger);  // while held
#pragma once

#include <kj/async.h>
#include <kj/timer.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <spdlog/logger.h>

#include "common/status.h"

namespace tfd {

class SystemdNotifier {
 public:
  // The notifier $NOTIFY_SOCKET asks for; nullptr when it is unset or empty.
  // INVALID_ARGUMENT when it names no socket this protocol can reach (a
  // relative path, a name longer than sockaddr_un holds, systemd 254's
  // vsock addresses); the error of creating the socket otherwise.
  // $WATCHDOG_USEC turns on keep-alives, unless $WATCHDOG_PID names another
  // process (the variables were inherited, not meant for this one).
  static StatusOr<std::unique_ptr<SystemdNotifier>> FromEnvironment(
      const std::function<const char*(const char*)>& getenv);

  // Use FromEnvironment; the key keeps construction in this class.
  struct PrivateKey {};
  explicit SystemdNotifier(PrivateKey) {}
  ~SystemdNotifier();
  SystemdNotifier(const SystemdNotifier&) = delete;
  SystemdNotifier& operator=(const SystemdNotifier&) = delete;

  // Sends `state`, newline-separated assignments ("READY=1\nSTATUS=...").
  // UNAVAILABLE when no one receives on the socket (the manager is gone).
  Status Notify(std::string_view state);

  // How often KeepAlive sends WATCHDOG=1: half of $WATCHDOG_USEC, as
  // sd_watchdog_enabled(3) advises, so one late wake-up of the loop does
  // not miss the deadline. nullopt when the watchdog is off.
  std::optional<std::chrono::microseconds> keep_alive_interval() const {
    return keep_alive_interval_;
  }

  // Sends WATCHDOG=1 every keep_alive_interval() from the thread's event
  // loop for as long as the returned promise is held; a loop that stops
  // turning stops the keep-alives, which is what the watchdog is for. A
  // send that fails is logged and the next one tried. Never resolves;
  // without a watchdog it does nothing.
  kj::Promise<void> KeepAlive(kj::Timer& timer, std::shared_ptr<spdlog::logger> logger);

 private:
  kj::Promise<void> KeepAliveLoop(kj::Timer& timer, std::shared_ptr<spdlog::logger> logger);

  int fd_ = -1;          // an unbound, non-blocking AF_UNIX datagram socket
  sockaddr_un peer_{};   // where datagrams go: $NOTIFY_SOCKET
  socklen_t peer_len_ = 0;
  std::string address_;  // $NOTIFY_SOCKET as given, for messages
  std::optional<std::chrono::microseconds> keep_alive_interval_;
};

}  // namespace tfd
