// Raw TCP on loopback: what the hardware and the kernel give without tfd, as
// the yardstick for tfd's own figures. Plain blocking sockets, TCP_NODELAY,
// no framework.
//
// The peers run in a child process (bench/bench_child.h) on a listening
// socket the parent made, so the parent knows the port before the child runs:
//
//   int port = 0;
//   int fd = ListenLoopback(&port);
//   auto echo = Subprocess::Fork([fd] { return RunEchoPeer(fd); }, BenchChild(1));
//   int conn = ConnectLoopback(port);
//   auto micros = PingPong(conn, 2000);
//
// Every blocking call has a bound (kIoTimeout): a peer that dies turns into
// an error, not a hang.
//
// Thread-safety: functions on the caller's sockets; no shared state.
#pragma once

#include <chrono>
#include <cstddef>
#include <vector>

#include "common/status.h"

namespace tfd::bench {

inline constexpr std::chrono::seconds kIoTimeout{60};

// A socket listening on 127.0.0.1 at a port the kernel picks (set in *port).
StatusOr<int> ListenLoopback(int* port);
// A connected socket to 127.0.0.1:port with TCP_NODELAY and kIoTimeout.
StatusOr<int> ConnectLoopback(int port);
// TCP_NODELAY and kIoTimeout on a socket accepted from ListenLoopback's.
void ConfigureSocket(int fd);

// How a peer waits for the next byte: asleep in read(2), or polling with
// non-blocking reads and sched_yield between them, as a tfd task run with
// --spin-wait-us does (daemon/rpc/spin_wait.h) but without ever sleeping.
enum class PeerWait { kSleep, kPoll };

// Peers: each accepts one connection on `listen_fd`, serves it until the
// other end closes, and returns a process exit code.
// Echoes every byte back at once.
int RunEchoPeer(int listen_fd, PeerWait wait = PeerWait::kSleep);
// Forwards each byte to an echo peer at `upstream_port` and its answer back:
// a two-hop round trip, the shape of client -> master -> worker.
int RunRelayPeer(int listen_fd, int upstream_port, PeerWait wait = PeerWait::kSleep);
// Answers each 8-byte request n with n bytes from a buffer of `max_bytes`
// touched in advance (a pull, like a tensor receive).
int RunStreamPeer(int listen_fd, size_t max_bytes);

// `iterations` one-byte round trips on `fd`; the time of each, in µs.
StatusOr<std::vector<double>> PingPong(int fd, int iterations);
// Asks a stream peer for `n` bytes and reads them into `buffer`; returns the
// seconds from the request to the last byte.
StatusOr<double> PullStream(int fd, char* buffer, size_t n);

}  // namespace tfd::bench
