#include "bench/raw_tcp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <memory>

namespace tfd::bench {
namespace {

using Clock = std::chrono::steady_clock;

Status Errno(const char* what) { return errors::Unavailable(what, ": ", strerror(errno)); }

}  // namespace

void ConfigureSocket(int fd) {
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  timeval tv{};
  tv.tv_sec = kIoTimeout.count();
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

namespace {

Status WriteAll(int fd, const char* data, size_t n) {
  while (n > 0) {
    const ssize_t k = write(fd, data, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return Errno("write");
    data += k;
    n -= static_cast<size_t>(k);
  }
  return OkStatus();
}

// OUT_OF_RANGE at a clean end of stream before the first byte.
Status ReadAll(int fd, char* data, size_t n) {
  size_t got = 0;
  while (got < n) {
    const ssize_t k = read(fd, data + got, n - got);
    if (k < 0 && errno == EINTR) continue;
    if (k == 0) {
      return got == 0 ? errors::OutOfRange("end of stream")
                      : errors::Unavailable("the peer closed after ", got, " of ", n, " bytes");
    }
    if (k < 0) return Errno("read");
    got += static_cast<size_t>(k);
  }
  return OkStatus();
}

// ReadAll without sleeping: non-blocking reads, yielding the CPU between
// them, for at most kIoTimeout.
Status ReadAllPolling(int fd, char* data, size_t n) {
  const auto deadline = Clock::now() + kIoTimeout;
  size_t got = 0;
  while (got < n) {
    const ssize_t k = recv(fd, data + got, n - got, MSG_DONTWAIT);
    if (k == 0) {
      return got == 0 ? errors::OutOfRange("end of stream")
                      : errors::Unavailable("the peer closed after ", got, " of ", n, " bytes");
    }
    if (k > 0) {
      got += static_cast<size_t>(k);
      continue;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return Errno("recv");
    if (Clock::now() > deadline) return errors::DeadlineExceeded("no byte within ", kIoTimeout.count(), " s");
    sched_yield();
  }
  return OkStatus();
}

Status Read(PeerWait wait, int fd, char* data, size_t n) {
  return wait == PeerWait::kPoll ? ReadAllPolling(fd, data, n) : ReadAll(fd, data, n);
}

// Accepts one connection within kIoTimeout; -1 on failure.
int AcceptOne(int listen_fd) {
  pollfd p{listen_fd, POLLIN, 0};
  if (poll(&p, 1, static_cast<int>(kIoTimeout.count() * 1000)) != 1) return -1;
  const int fd = accept(listen_fd, nullptr, nullptr);
  close(listen_fd);
  if (fd >= 0) ConfigureSocket(fd);
  return fd;
}

}  // namespace

StatusOr<int> ListenLoopback(int* port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Errno("socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(fd, 4) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    Status s = Errno("bind/listen on 127.0.0.1");
    close(fd);
    return s;
  }
  *port = ntohs(addr.sin_port);
  return fd;
}

StatusOr<int> ConnectLoopback(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Errno("socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    Status s = Errno("connect to 127.0.0.1");
    close(fd);
    return s;
  }
  ConfigureSocket(fd);
  return fd;
}

int RunEchoPeer(int listen_fd, PeerWait wait) {
  const int fd = AcceptOne(listen_fd);
  if (fd < 0) return 1;
  char byte = 0;
  while (Read(wait, fd, &byte, 1).ok()) {
    if (!WriteAll(fd, &byte, 1).ok()) return 1;
  }
  close(fd);
  return 0;
}

int RunRelayPeer(int listen_fd, int upstream_port, PeerWait wait) {
  const int fd = AcceptOne(listen_fd);
  if (fd < 0) return 1;
  auto up = ConnectLoopback(upstream_port);
  if (!up.ok()) return 1;
  char byte = 0;
  while (Read(wait, fd, &byte, 1).ok()) {
    if (!WriteAll(*up, &byte, 1).ok() || !Read(wait, *up, &byte, 1).ok() ||
        !WriteAll(fd, &byte, 1).ok()) {
      return 1;
    }
  }
  close(*up);
  close(fd);
  return 0;
}

int RunStreamPeer(int listen_fd, size_t max_bytes) {
  const int fd = AcceptOne(listen_fd);
  if (fd < 0) return 1;
  // Touched up front, so the figure is the transfer and not page faults.
  auto buffer = std::make_unique<char[]>(max_bytes);
  std::memset(buffer.get(), 1, max_bytes);
  uint64_t n = 0;
  while (ReadAll(fd, reinterpret_cast<char*>(&n), sizeof(n)).ok() && n > 0) {
    if (n > max_bytes || !WriteAll(fd, buffer.get(), n).ok()) return 1;
  }
  close(fd);
  return 0;
}

StatusOr<std::vector<double>> PingPong(int fd, int iterations) {
  std::vector<double> micros;
  micros.reserve(static_cast<size_t>(iterations));
  char byte = 'x';
  for (int i = 0; i < iterations; ++i) {
    const auto start = Clock::now();
    TFD_RETURN_IF_ERROR(WriteAll(fd, &byte, 1));
    TFD_RETURN_IF_ERROR(ReadAll(fd, &byte, 1));
    micros.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  return micros;
}

StatusOr<double> PullStream(int fd, char* buffer, size_t n) {
  const uint64_t request = n;
  const auto start = Clock::now();
  TFD_RETURN_IF_ERROR(WriteAll(fd, reinterpret_cast<const char*>(&request), sizeof(request)));
  TFD_RETURN_IF_ERROR(ReadAll(fd, buffer, n));
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace tfd::bench
