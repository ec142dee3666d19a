#include "daemon/transport/stream_socket.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <fstream>

namespace tfd {
namespace {

// What a socket may ask for with SO_SNDBUF / SO_RCVBUF; 0 if unknown.
size_t KernelMax(const char* path) {
  std::ifstream in(path);
  size_t value = 0;
  in >> value;
  return in ? value : 0;
}

bool KernelAllows(size_t bytes) {
  static const bool allowed = KernelMax("/proc/sys/net/core/wmem_max") >= bytes &&
                              KernelMax("/proc/sys/net/core/rmem_max") >= bytes;
  return allowed;
}

}  // namespace

bool PeerIsLoopback(kj::AsyncIoStream& socket) {
  sockaddr_storage peer{};
  kj::uint length = sizeof(peer);
  KJ_IF_MAYBE(e, kj::runCatchingExceptions([&]() {
    socket.getpeername(reinterpret_cast<sockaddr*>(&peer), &length);
  })) {
    return false;  // not a socket, or one that does not say
  }
  if (peer.ss_family == AF_UNIX) return true;
  if (peer.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&peer);
    return (ntohl(a->sin_addr.s_addr) >> 24) == 127;
  }
  if (peer.ss_family == AF_INET6) {
    const auto& a = reinterpret_cast<const sockaddr_in6*>(&peer)->sin6_addr;
    if (IN6_IS_ADDR_LOOPBACK(&a)) return true;
    return IN6_IS_ADDR_V4MAPPED(&a) && a.s6_addr[12] == 127;
  }
  return false;
}

bool SizeStreamSocket(kj::AsyncIoStream& socket) {
  if (!KernelAllows(kStreamSocketBytes) || !PeerIsLoopback(socket)) return false;
  const int bytes = static_cast<int>(kStreamSocketBytes);
  bool sized = false;
  KJ_IF_MAYBE(e, kj::runCatchingExceptions([&]() {
    socket.setsockopt(SOL_SOCKET, SO_SNDBUF, &bytes, sizeof(bytes));
    socket.setsockopt(SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
    sized = true;
  })) {
    // A socket that refuses the size keeps the kernel's: slower, not wrong.
  }
  return sized;
}

}  // namespace tfd
