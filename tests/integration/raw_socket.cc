#include "tests/integration/raw_socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tfd::testing {
namespace {

using Clock = std::chrono::steady_clock;

int MillisLeft(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::max<int64_t>(0, left.count()));
}

bool ParseAddress(const std::string& address, sockaddr_in* out) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) return false;
  *out = sockaddr_in{};
  out->sin_family = AF_INET;
  out->sin_port = htons(static_cast<uint16_t>(std::stoi(address.substr(colon + 1))));
  return inet_pton(AF_INET, address.substr(0, colon).c_str(), &out->sin_addr) == 1;
}

}  // namespace

StatusOr<std::unique_ptr<RawSocket>> RawSocket::Connect(const std::string& address,
                                                        std::chrono::milliseconds timeout,
                                                        const std::string& source_ip) {
  sockaddr_in to{};
  if (!ParseAddress(address, &to)) return errors::InvalidArgument("bad address '", address, "'");
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return errors::Unavailable("socket: ", strerror(errno));
  auto sock = std::make_unique<RawSocket>(fd);
  if (!source_ip.empty()) {
    sockaddr_in from{};
    from.sin_family = AF_INET;
    if (inet_pton(AF_INET, source_ip.c_str(), &from.sin_addr) != 1 ||
        bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof(from)) != 0) {
      return errors::Unavailable("cannot bind to ", source_ip, ": ", strerror(errno));
    }
  }
  if (connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)) != 0 && errno != EINPROGRESS) {
    return errors::Unavailable("connect to ", address, ": ", strerror(errno));
  }
  pollfd p{fd, POLLOUT, 0};
  if (poll(&p, 1, static_cast<int>(timeout.count())) != 1) {
    return errors::DeadlineExceeded("connect to ", address, " did not finish");
  }
  int error = 0;
  socklen_t len = sizeof(error);
  getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len);
  if (error != 0) return errors::Unavailable("connect to ", address, ": ", strerror(error));
  return sock;
}

RawSocket::~RawSocket() {
  if (fd_ >= 0) close(fd_);
}

bool RawSocket::Send(const std::string& bytes, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return false;
    pollfd p{fd_, POLLOUT, 0};
    if (poll(&p, 1, MillisLeft(deadline)) != 1) return false;
    if (p.revents & (POLLERR | POLLHUP)) return false;
  }
  return true;
}

int RawSocket::local_port() const {
  sockaddr_in addr{};
  socklen_t len = sizeof(addr);
  getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  return ntohs(addr.sin_port);
}

void RawSocket::ShutdownWrite() { shutdown(fd_, SHUT_WR); }

bool RawSocket::WaitClosed(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  char buf[4096];
  for (;;) {
    const ssize_t n = recv(fd_, buf, sizeof(buf), 0);
    if (n == 0) return true;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return true;
    if (n > 0) continue;
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, MillisLeft(deadline)) != 1) return false;
  }
}

std::optional<std::string> RawSocket::ReadUntilClosed(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = recv(fd_, buf, sizeof(buf), 0);
    if (n == 0) return out;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return out;
    if (n > 0) {
      out.append(buf, static_cast<size_t>(n));
      continue;
    }
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, MillisLeft(deadline)) != 1) return std::nullopt;
  }
}

SilentListener::SilentListener() {
  fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  listen(fd_, 16);
  socklen_t len = sizeof(addr);
  getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
}

SilentListener::~SilentListener() {
  if (fd_ >= 0) close(fd_);
}

std::string SilentListener::address() const { return "127.0.0.1:" + std::to_string(port_); }

StandIn::StandIn(const std::string& address) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) return;
  fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int on = 1;
  setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(std::stoi(address.substr(colon + 1))));
  if (bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(fd_, 16) != 0) {
    Close();
  }
}

StandIn::~StandIn() { Close(); }

bool StandIn::WaitConnection(std::chrono::milliseconds timeout) {
  if (fd_ < 0) return false;
  pollfd p{.fd = fd_, .events = POLLIN, .revents = 0};
  if (poll(&p, 1, static_cast<int>(timeout.count())) != 1) return false;
  const int conn = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (conn < 0) return false;
  // A reset, not a close: no TIME_WAIT left on the task's port.
  const linger reset{.l_onoff = 1, .l_linger = 0};
  setsockopt(conn, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
  close(conn);
  return true;
}

void StandIn::Close() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

}  // namespace tfd::testing
