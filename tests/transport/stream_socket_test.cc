// The socket under a stream to a task of this host gets buffers sized for
// tensors (fewer wake-ups per MiB on both ends); a socket to another host,
// or a stream that is no socket, keeps the kernel's.
#include <catch2/catch.hpp>
#include <kj/async-io.h>
#include <sys/socket.h>

#include <fstream>

#include "daemon/transport/stream_socket.h"

namespace tfd {
namespace {

size_t ProcValue(const char* path) {
  std::ifstream in(path);
  size_t v = 0;
  in >> v;
  return v;
}

int BufferBytes(kj::AsyncIoStream& s, int option) {
  int bytes = 0;
  kj::uint length = sizeof(bytes);
  s.getsockopt(SOL_SOCKET, option, &bytes, &length);
  return bytes;
}

struct Loopback {
  Loopback() {
    auto& network = io.provider->getNetwork();
    auto listener = network.parseAddress("127.0.0.1:0").wait(io.waitScope)->listen();
    auto accepted = listener->accept();
    client = network.parseAddress("127.0.0.1", listener->getPort())
                 .wait(io.waitScope)->connect().wait(io.waitScope);
    server = accepted.wait(io.waitScope);
  }
  kj::AsyncIoContext io = kj::setupAsyncIo();
  kj::Own<kj::AsyncIoStream> client, server;
};

TEST_CASE("a loopback stream's socket is sized for tensors where the kernel allows it") {
  Loopback pair;
  CHECK(PeerIsLoopback(*pair.client));
  CHECK(PeerIsLoopback(*pair.server));
  const bool allowed = ProcValue("/proc/sys/net/core/wmem_max") >= kStreamSocketBytes &&
                       ProcValue("/proc/sys/net/core/rmem_max") >= kStreamSocketBytes;
  const int send_before = BufferBytes(*pair.client, SO_SNDBUF);
  const int receive_before = BufferBytes(*pair.server, SO_RCVBUF);
  CHECK(SizeStreamSocket(*pair.client) == allowed);
  CHECK(SizeStreamSocket(*pair.server) == allowed);
  if (allowed) {
    // The kernel reports twice what was asked (its bookkeeping overhead).
    CHECK(static_cast<size_t>(BufferBytes(*pair.client, SO_SNDBUF)) >= kStreamSocketBytes);
    CHECK(static_cast<size_t>(BufferBytes(*pair.server, SO_RCVBUF)) >= kStreamSocketBytes);
  } else {
    CHECK(BufferBytes(*pair.client, SO_SNDBUF) == send_before);
    CHECK(BufferBytes(*pair.server, SO_RCVBUF) == receive_before);
  }
}

TEST_CASE("a stream that is no socket keeps what it has") {
  auto io = kj::setupAsyncIo();
  // An in-process pipe: no socket under it to ask.
  auto pipe = kj::newTwoWayPipe();
  CHECK_FALSE(PeerIsLoopback(*pipe.ends[0]));
  CHECK_FALSE(SizeStreamSocket(*pipe.ends[0]));
}

}  // namespace
}  // namespace tfd
