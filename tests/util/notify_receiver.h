// NotifyReceiver: the service manager's end of the sd_notify protocol for
// tests: an AF_UNIX datagram socket bound to a path or, for a name starting
// with '@', in the abstract namespace. Pass name() as $NOTIFY_SOCKET.
//
//   NotifyReceiver manager("@tfd-test-" + std::to_string(getpid()));
//   ... start what notifies, with NOTIFY_SOCKET=manager.name() ...
//   std::optional<std::string> m = manager.Receive(std::chrono::seconds(10));
//
// Thread-safety: one test thread.
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>

namespace tfd::testing {

class NotifyReceiver {
 public:
  explicit NotifyReceiver(std::string name) : name_(std::move(name)) {
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) throw std::runtime_error("socket: " + std::string(strerror(errno)));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (name_.size() >= sizeof(addr.sun_path)) throw std::runtime_error("name too long: " + name_);
    memcpy(addr.sun_path, name_.c_str(), name_.size() + 1);
    socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name_.size() + 1);
    if (name_[0] == '@') {
      addr.sun_path[0] = '\0';
      len -= 1;  // abstract names have no terminator
    }
    if (bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0) {
      close(fd_);
      throw std::runtime_error("bind " + name_ + ": " + strerror(errno));
    }
  }
  ~NotifyReceiver() {
    close(fd_);
    if (name_[0] == '/') unlink(name_.c_str());
  }
  NotifyReceiver(const NotifyReceiver&) = delete;
  NotifyReceiver& operator=(const NotifyReceiver&) = delete;

  const std::string& name() const { return name_; }

  // The next datagram; nullopt when none came within `timeout`.
  std::optional<std::string> Receive(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd p{fd_, POLLIN, 0};
      const int ready = poll(&p, 1, static_cast<int>(std::max<int64_t>(0, left.count())));
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) return std::nullopt;
      char buffer[4096];
      const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
      if (n < 0) return std::nullopt;
      return std::string(buffer, static_cast<size_t>(n));
    }
  }

  // Waits for a datagram holding the line `line` ("READY=1"), passing over
  // others; every datagram seen is appended to `seen`, one per line.
  bool WaitFor(const std::string& line, std::chrono::milliseconds timeout, std::string& seen) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      auto m = Receive(left);
      if (!m) return false;
      seen += *m + "\n";
      if (("\n" + *m + "\n").find("\n" + line + "\n") != std::string::npos) return true;
    }
  }

 private:
  std::string name_;
  int fd_ = -1;
};

}  // namespace tfd::testing
